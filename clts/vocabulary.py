"""One name per idea across the public API (see docs/api-conventions.md): ``device=``,
``version=``, ``progress=``, ``time_axis=``. Older names stay accepted for one release as
deprecated aliases that warn (``DeprecationWarning``, once per function and alias in a process)
and are passed on under the new name.

``FOREIGN_NAMES`` maps the names of the anchor libraries (R's ``bfastmonitor`` and ``stl``,
statsmodels' ``STL``, stumpy) to ours: a keyword that is not a parameter of the function but is
in the table is a ``TypeError`` that names ours; any other unknown keyword is a ``TypeError``
that lists the function's parameters and its tuning keywords. The same table is printed in
docs/api-conventions.md (tests/test_vocabulary.py compares them)."""
from __future__ import annotations

import functools
import inspect
import threading

from .errors import warn_caller

#: (function, old keyword) pairs that have warned in this process
_warned: set = set()
_lock = threading.Lock()


def reset_warned() -> None:
    """Let every deprecated alias warn again (tests)."""
    with _lock:
        _warned.clear()


# (library, its name, our name, our function): the keyword a user of that library types.
FOREIGN_NAMES = [
    ("R bfastmonitor", "order", "k", "bfast_monitor"),
    ("R bfastmonitor", "h", "hfrac", "bfast_monitor"),
    ("R bfastmonitor", "start", "start_monitor", "bfast_monitor"),
    ("R bfastmonitor", "data", "y", "bfast_monitor"),
    ("R bfastts", "frequency", "freq", "bfast_monitor"),
    ("R bfastts", "dates", "dates", "bfast_monitor"),
    ("R stl", "s_window", "seasonal", "stl"),
    ("R stl", "t_window", "trend", "stl"),
    ("R stl", "l_window", "low_pass", "stl"),
    ("R stl", "s_degree", "seasonal_deg", "stl"),
    ("R stl", "t_degree", "trend_deg", "stl"),
    ("R stl", "l_degree", "low_pass_deg", "stl"),
    ("R stl", "inner", "inner_iter", "stl"),
    ("R stl", "outer", "outer_iter", "stl"),
    ("statsmodels STL", "endog", "y", "stl"),
    ("statsmodels STL", "seasonal_period", "period", "stl"),
    ("stumpy stump", "T", "T_A", "matrix_profile"),
    ("stumpy stump", "excl_zone", "exclusion_zone", "matrix_profile"),
    ("stumpy gpu_stump", "device_id", "device", "matrix_profile"),
    ("stumpy stump", "ignore_trivial", "T_B (None: a self-join)", "matrix_profile"),
    ("scipy solve_banded", "ab", "a, b, c (the three diagonals)", "solve_tridiagonal"),
]


class UnknownParameterError(TypeError):
    """A keyword that a function does not take; ``names`` holds them, ``accepted`` what the
    function (or its Plan) accepts: its ``params`` and its ``tuning`` keywords (all of
    ``accepted`` are tuning keywords when ``params`` is None: a Plan's error)."""

    def __init__(self, message, names=(), accepted=(), params=None, tuning=None):
        super().__init__(message)
        self.names, self.accepted = list(names), list(accepted)
        self.params = None if params is None else list(params)
        self.tuning = list(accepted) if tuning is None else list(tuning)


def foreign_hint(fn_name: str, name: str) -> str | None:
    """``"R bfastmonitor's name; ours: k="`` for a foreign ``name`` of ``fn_name``, else None.
    R's dotted names (``s.window``) are looked up with underscores."""
    key = name.replace(".", "_")
    for lib, theirs, ours, fn in FOREIGN_NAMES:
        if fn == fn_name and theirs == key:
            return f"{name} is {lib}'s name: use {ours}" + ("=" if ours.isidentifier() else "")
    return None


def unknown_message(fn_name: str, names, params, tuning=()) -> str:
    """The message for unknown keywords ``names`` of ``fn_name``: foreign names with ours,
    then the function's parameters and tuning keywords."""
    hints = [h for h in (foreign_hint(fn_name, n) for n in names) if h]
    msg = f"{fn_name}: unknown parameter(s) {', '.join(names)}"
    if hints:
        msg += " (" + "; ".join(hints) + ")"
    msg += f"; parameters: {', '.join(params)}"
    if tuning:
        msg += f"; tuning keywords (device profile): {', '.join(sorted(tuning))}"
    return msg


def _check_keywords(name, fn, params, has_var_kw, kw):
    """Raise for keywords ``fn`` does not take (all of them when it has no ``**kwargs``; the
    foreign names of the table when its ``**kwargs`` are tuning keywords)."""
    if not kw:
        return
    unknown = [k for k in kw if k not in params]
    if not has_var_kw:
        bad = unknown
    else:
        bad = [k for k in unknown if foreign_hint(name, k)]
    if bad:
        public = [p for p in params if not p.startswith("_")]
        raise UnknownParameterError(unknown_message(name, bad, public), bad, public,
                                    params=public, tuning=())


def renamed(_name: str | None = None, **old_to_new: str):
    """Decorator: keyword ``old=`` accepted as ``new=`` with a DeprecationWarning (``new``
    ``"**plan_overrides"``: a dict ``old={...}`` passed on as keywords); unknown keywords are
    a TypeError naming the function's parameters (and ours for a name of R, statsmodels or
    stumpy, from ``FOREIGN_NAMES``)."""
    def deco(fn):
        name = _name or fn.__name__
        sig = inspect.signature(fn).parameters
        params = [p for p, v in sig.items() if v.kind not in (v.VAR_KEYWORD, v.VAR_POSITIONAL)
                  and p != "self"]
        has_var_kw = any(v.kind == v.VAR_KEYWORD for v in sig.values())
        known = frozenset(params)
        # with **kwargs (tuning keywords) only the table's foreign names are checked up front
        foreign = frozenset(t for _, t, _, f in FOREIGN_NAMES if f == name)

        @functools.wraps(fn)
        def wrapper(*args, **kw):
            for old, new in old_to_new.items():
                if old in kw:
                    if new.startswith("**"):
                        given = kw[old] or {}
                        if not isinstance(given, dict):
                            raise TypeError(f"{name}: {old} must be a dict, got "
                                            f"{type(given).__name__}")
                        both = sorted(set(given) & set(kw))
                        if both:
                            raise TypeError(f"{name}: give {', '.join(both)} as keywords or "
                                            f"in {old}=, not both")
                    elif new in kw:
                        raise TypeError(f"{name}: give {new}= or its deprecated name {old}=, "
                                        "not both")
                    with _lock:
                        first = (name, old) not in _warned
                        _warned.add((name, old))
                    if first:
                        use = (f"the tuning keywords themselves ({new})" if
                               new.startswith("**") else f"{new}=")
                        warn_caller(f"{name}: {old}= is deprecated, use {use} (the old "
                                    "name will be removed in the next release)",
                                    DeprecationWarning)
                    if new.startswith("**"):
                        kw.update(kw.pop(old) or {})
                    else:
                        kw[new] = kw.pop(old)
            if kw and not kw.keys() <= known and (not has_var_kw or foreign):
                _check_keywords(name, fn, params, has_var_kw, kw)
            try:
                return fn(*args, **kw)
            except UnknownParameterError as exc:
                if not has_var_kw or not exc.names or not set(exc.names) <= set(kw):
                    raise
                public = [p for p in params if not p.startswith("_")]
                # a function that passes all its **kwargs on (mann_kendall -> trend_test): the
                # inner one's parameters are this one's too (not where it sets some itself)
                if name in PASSTHROUGH:
                    public += [p for p in (exc.params or [])
                               if p not in public and p not in PASSTHROUGH[name]]
                raise UnknownParameterError(
                    unknown_message(name, exc.names, public, exc.tuning), exc.names,
                    public + exc.tuning, params=public, tuning=exc.tuning) from None
        wrapper.deprecated_aliases = dict(old_to_new)
        return wrapper
    return deco


#: functions whose ``**kwargs`` are the parameters of the function they call, but those they set
#: themselves
PASSTHROUGH = {"mann_kendall": (), "sen_slope": ("variant",)}

#: one keyword per idea in every public signature (CONTRIBUTING.md, "One name per idea")
CANONICAL = {"where to run": "device", "which code version": "version",
             "progress bar": "progress", "which axis is time": "time_axis",
             "an explicit Plan": "plan"}
#: names that never appear in a public signature: the deprecated aliases (accepted through
#: ``renamed`` only) and the drifting spellings of the ideas above
NOT_PUBLIC = {"dev", "devices", "loess_version", "method", "progress_bar", "prefetch",
              "show_progress", "axis_time", "time_dim", "loess_params", "params", "overrides"}
#: the one keyword (``**plan_overrides``) through which every algorithm takes its tuning
#: keywords (a Plan's fields: code version, lanes, tile, work-group, thresholds)
OVERRIDES = "plan_overrides"


def foreign_names_table() -> str:
    """``FOREIGN_NAMES`` as the Markdown table of docs/api-conventions.md."""
    rows = ["| library | their keyword | ours | function |", "|---|---|---|---|"]
    rows += [f"| {lib} | `{theirs}` | `{ours}` | `{fn}` |"
             for lib, theirs, ours, fn in FOREIGN_NAMES]
    return "\n".join(rows)
