"""The runner of one STL call's separate kernels (or the fused one): programs, per-call tables
and the launches of every iteration (moved out of ``api.py``, which keeps the public function)."""
from __future__ import annotations

import numpy as np

from ..runtime import capturing
from ..runtime.launch import fixed_local, prepare
from ..runtime.memory import scratch
from ..runtime.pipeline import device_marker
from ..runtime.replay import Nested, Recorder
from ..runtime.programs import build_program, prebuild
from . import fused
from .params import QUAD_DET_TOL
from .plan import LoessChoice, Problem, fit_table, make_plan
from .steps import Steps


#: most (Plan, Runner) pairs kept per device by :func:`planned` (then the cache starts again)
PLAN_CACHE_SIZE = 256


def planned(dev, p: dict, B: int, N: int, dtype, complete: bool, version="auto",
            overrides=None):
    """The Plan and the Runner of an STL call (checked parameters ``p``, ``B`` series of ``N``
    values), made once per device, problem, keywords and state of the profile's ``stl``
    section: a repeated call skips the profile reads, the Plan's choices and the Runner's
    tables. Runners keep no per-call state (each :meth:`Runner.run` makes its own)."""
    overrides = overrides or {}
    dt = np.dtype(dtype)

    def make():
        plan = make_plan(dev, Problem(p, B, N, dt.itemsize, complete), version=version,
                         **overrides)
        runner = Runner(dev, dt, N, p, {"seasonal": plan.seasonal, "trend": plan.trend,
                                        "low_pass": plan.low_pass},
                        complete=complete, interp_ipw=plan.interp_per_item, steps=plan.steps,
                        fused=plan.fused)
        return plan, runner
    try:
        key = (make_plan, B, N, dt, bool(complete), version, tuple(sorted(p.items())),
               tuple(sorted(overrides.items())))
        hash(key)
    except TypeError:                   # an unhashable value: made for this call
        return make()
    from ..runtime.plans import cached_under_profile
    return cached_under_profile(dev, "stl.plans", key, "stl", make, PLAN_CACHE_SIZE)


class Runner:
    """Builds the programs and per-call tables for one (device, dtype, length, parameters)."""

    def __init__(self, dev, dtype, N, p, versions: dict, complete: bool, interp_ipw=0,
                 steps="series", fused=0):
        self.dev, self.dtype, self.N, self.p = dev, np.dtype(dtype), N, p
        self.fused = int(fused)     # work-items per series of the fused STL (0: not fused)
        self.interp_ipw = int(interp_ipw)
        self.steps = Steps(self, steps)
        self.hermite = p["interpolation"] == "hermite"
        self.real = "double" if self.dtype == np.float64 else "float"
        self.complete = complete
        P = p["period"]
        self.K = -(-N // P)
        self.versions = versions
        self._prebuilt = False
        self._progs = {}          # (name, parameters) -> Program (``_prog``)
        self._recorder = Recorder()     # device calls' launches by shape (``runtime.replay``)
        try:
            key = ("stl-smoothers", N, tuple(sorted(p.items())))
            hash(key)
        except TypeError:               # an unhashable parameter value: made for this call
            self.smoothers = _smoothers(dev, N, p)
        else:                           # made once per device, length and parameters
            self.smoothers = dev.state.constant(key, lambda: _smoothers(dev, N, p))

    @staticmethod
    def _one(n, q, jump):
        fp, an = fit_table(n, q, jump)
        return np.array([fp], np.int32), np.array([an], np.int32)

    def _spec(self, name, **kw):
        return f"stl/{name}.cl.mako", dict(real=self.real, **kw)

    def _prog(self, name, **kw):
        # a Runner serves every call of its Plan (``planned``): its programs are looked up
        # once (the program cache's key is a repr of the sorted parameters)
        key = (name, tuple(sorted(kw.items())))
        try:
            prg = self._progs.get(key)
        except TypeError:                   # an unhashable parameter value
            return build_program(self.dev, *self._spec(name, **kw))
        if prg is None:
            prg = self._progs[key] = build_program(self.dev, *self._spec(name, **kw))
        return prg

    def _kernel(self, prg, name):
        # Oclgrind's uninitialised-value checker loses track of arguments when a kernel object
        # is re-used by a later call: give the simulator fresh kernel objects.
        if getattr(self.dev.info, "simulator", False):
            from ..runtime.kernel_objects import new_kernel
            return new_kernel(prg.cl_program, name)
        return prg.kernel(name)

    def _loess_prog(self, version, deg, use_w, choice: LoessChoice, complete=False, otl=1):
        key = ("loess", version, deg, use_w, choice, complete, otl)
        prg = self._progs.get(key)
        if prg is None:
            prg = self._progs[key] = build_program(
                self.dev, *self._loess_spec(version, deg, use_w, choice, complete, otl))
        return prg

    def _loess_spec(self, version, deg, use_w, choice: LoessChoice, complete=False, otl=1):
        kw = dict(deg=deg, use_w=use_w, quad_tol=repr(QUAD_DET_TOL), out_lanes=otl,
                  hermite=self.hermite, nns_planes=self.steps.nns_planes)
        if version == "intragroup":
            kw["wg"] = choice.wg
        if version == "flat":
            kw["chunk"] = choice.chunk
            kw["interleave"] = choice.interleave
            kw["finish_tile"] = self.steps.finish_tile if choice.interleave else 0
        if version == "outer":
            kw["lanes"] = choice.lanes
            kw["unroll"] = self.steps.window_unroll
            kw["complete"] = complete and choice.lanes > 1
            kw["table"] = kw["complete"] and choice.table
        return self._spec(f"loess_{version}", **kw)

    def prebuild(self) -> None:
        """Build the programs :meth:`run` asks for from several threads at once
        (:func:`clts.runtime.programs.prebuild`): a first call's builds overlap. Once per
        runner (a call), whatever its chunks."""
        if self._prebuilt:
            return
        self._prebuilt = True
        if self.fused:
            prebuild(self.dev, [self._spec("fused", **fused.params(self, self.fused))])
            return
        lanes = {k: (c.lanes if c.version == "outer" else 1) for k, c in self.versions.items()}
        Ls, Lt, Ll, hm = lanes["seasonal"], lanes["trend"], lanes["low_pass"], self.hermite
        st = self.steps
        progs = [("gather", st.gather_kw(Ls, Ll, hm)), ("ma", st.ma_kw(Ll)),
                 ("gather", st.gather_kw(Lt, Ll, hm)), ("robust", st.robust_kw(Lt)),
                 ("gather", st.gather_kw(1, 1, hm))]
        loess = []
        for name, otl in (("seasonal", Ll), ("low_pass", 1), ("trend", 1)):
            complete = self.complete or name == "low_pass"
            ch, sm = self.versions[name], self.smoothers[name]
            progs.append(("nns", st.nns_kw(complete)))
            ws = (False, True) if self.p["outer_iter"] > 0 and name != "low_pass" else (False,)
            loess += [(ch.version, sm["deg"], w, ch, complete, otl) for w in ws]
            nj = max(1, min(sm["jump"], sm["nmax"] - 1))
            if name == "seasonal" or (name == "trend" and nj > 1):
                progs.append(("interp", dict(extend=name == "seasonal", out_lanes=otl, hermite=hm)))
        prebuild(self.dev, [self._spec(n, **kw) for n, kw in progs]
                 + [self._loess_spec(*a) for a in loess])

    def recording(self, y, s, t, rw_out, passes, failed_out, row0):
        """The recording key and slots of a call (``runtime.replay``): a device call (nothing
        read back, no progress events, not on a simulator) is recorded by its batch, whether
        it brings its own weights and its first row; the slots are its own arrays' buffers.
        ``(None, None)`` for a call that is not recorded."""
        if failed_out is None or passes is not None or self.dev.info.simulator:
            return None, None
        return (y.shape[0], rw_out is None, row0), {
            "y": y.data, "s": s.data, "t": t.data, "failed": failed_out.data,
            "rw": None if rw_out is None else rw_out.data}

    def run(self, y, s, t, rw_out=None, passes=None, failed_out=None, row0=0, keep=None):
        """:meth:`_run`; inside another call's capture (MSTL's rounds) this call's recording,
        replayed or made, goes to that capture whole (``runtime.replay.Nested``) and not back
        to this Runner; a call that is not recorded leaves that capture incomplete."""
        if capturing.current() is None:
            return self._run(y, s, t, rw_out, passes, failed_out, row0, keep)
        hand = []
        with capturing.suspended():
            out = self._run(y, s, t, rw_out, passes, failed_out, row0, keep, hand)
        _, slots = self.recording(y, s, t, rw_out, passes, failed_out, row0)
        capturing.captured(Nested(hand[0], slots) if hand else None)
        return out

    def _run(self, y, s, t, rw_out=None, passes=None, failed_out=None, row0=0, keep=None,
             hand=None):
        """Enqueue the STL of the rows of the device array ``y`` (batch, length): seasonal and
        trend written into the device arrays ``s`` and ``t`` (y's shape), the robustness
        weights into ``rw_out`` when given (robust fits). Returns the failed-series mask (read
        back mid-way; the kernels may still run: see :meth:`finish_host`). ``passes``: a list
        that receives one event per inner iteration (a progress bar waits on them).

        With ``failed_out`` (a device array of bytes over the whole batch) nothing is read
        back: the mask goes to ``failed_out[row0:row0 + batch]`` on the device (returns None),
        and the flat LOESS's partial sums are sized for windows as wide as a whole segment
        (the widest a window of valid values can span) instead of the measured widest.
        ``keep``: a list that receives the call's temporaries (device results hold them until
        read); ``hand``: a list that receives the call's recording instead of the Runner."""
        if self.fused:
            return fused.run(self, self.fused, y, s, t, rw_out, passes, failed_out=failed_out,
                             row0=row0, keep=keep, hand=hand)
        import pyopencl.array as cla
        dev, q, dt = self.dev, self.dev.queue, self.dtype
        B, N, P, K = y.shape[0], self.N, self.p["period"], self.K
        i32 = np.int32
        sim = getattr(dev.info, "simulator", False)
        rkey, slots = self.recording(y, s, t, rw_out, passes, failed_out, row0)
        if rkey is not None and self._recorder.replay(rkey, slots, keep, hand):
            return None
        seq, temps = [], []

        def emit(go):
            seq.append(go)
            go()

        def alloc(shape, dtype=dt):
            # on Oclgrind, host-initialised buffers: its uninitialised-value checker misreads
            # device-written buffers of a second call in the same process
            if sim:
                return cla.to_device(q, np.zeros(shape, dtype))
            # the device's scratch pool: a fresh buffer costs a page fault per 4 KB the first
            # time a kernel touches it (docs/performance.md, "Figures behind the code")
            a = scratch(dev, shape, dtype)
            temps.append(a)
            return a

        # lanes of the vector (outer) LOESS of each smoother: its input is written interleaved
        # by that many series, the batch padded to Bp rows
        lanes = {k: (c.lanes if c.version == "outer" else 1) for k, c in self.versions.items()}
        Ls, Lt, Ll = lanes["seasonal"], lanes["trend"], lanes["low_pass"]
        Lmax = max(lanes.values())
        Bp = -(-B // Lmax) * Lmax
        rw = rw_out if rw_out is not None else alloc((B, N))
        lp = alloc((B, N))
        u, lp0 = alloc((Bp, N)), alloc((Bp, N))
        rwt = alloc((Bp, N)) if Lt > 1 else rw
        C = alloc((Bp, N + 2 * P))
        ring = alloc((Bp, P))
        # slopes of the local fits for cubic Hermite interpolation (layout of each output;
        # one buffer serves the three smoothers, each interp runs right after its LOESS)
        slp = alloc((Bp, N + 2 * P)) if self.hermite else None
        hargs = [slp.data] if self.hermite else []
        z = alloc((Bp, P, K))
        rwz = alloc((Bp, P, K))
        # C (seasonal fits + end fits) interleaved by the low-pass lanes Ll: the moving
        # averages read it with vloadN and write the low-pass LOESS input in the same layout
        hm = self.hermite
        steps = self.steps
        gprg = self._prog("gather", **steps.gather_kw(Ls, Ll, hm))
        season_prg = self._prog("gather", **steps.gather_kw(Lt, Ll, hm))
        ma_prg = self._prog("ma", **steps.ma_kw(Ll))
        robust_prg = self._prog("robust", **steps.robust_kw(Lt))

        g1 = self._prog("gather", **steps.gather_kw(1, 1, hm))
        emit(prepare(dev, g1, "stl_init", *fixed_local(dev, Bp * N), np.int64(B * N),
                     np.int64(Bp * N if Lt > 1 else 0), t.data, s.data, rw.data, rwt.data))
        # validity of the cycle-subseries (plain layout) for their NNS: y gathered (t = 0)
        z0 = alloc((B, P, K)) if not self.complete else z
        if not self.complete:
            emit(steps.gather(g1, 1, y, t, rw, N, P, K, B, B, 0, z0, rwz))
        # NNS once per call, per smoother
        layouts = {"seasonal": (z0, P * K, K), "trend": (y, N, 0), "low_pass": (y, N, 0)}
        st = {}
        extra = []
        for name, sm in self.smoothers.items():
            M, m_b, m_s = layouts[name]
            complete = self.complete or name == "low_pass"
            nprg = self._prog("nns", **steps.nns_kw(complete))
            S, NF = sm["S"], sm["NF"]
            Bn = 1 if complete else B  # complete data: one set of windows serves every series
            stats = alloc((Bn * S, 2), i32)
            # four ints per fit point, or (GPUs) four planes: lo, hi, h, fallback point
            nns = alloc((4, Bn * S * NF) if steps.nns_planes else (Bn * S * NF, 4), i32)
            npos = sm["nmax"]
            # packed valid positions (the NaN index computation); none with complete data
            pos = stats if complete else alloc((Bn * S, npos), i32)
            emit(steps.stats(nprg, complete, sm["nmax"], M, m_b, m_s, sm["seg"], S, Bn, npos,
                             stats, pos))
            emit(prepare(dev, nprg, "stl_nns", *fixed_local(dev, Bn * S * NF), sm["seg"],
                         sm["fp"], sm["an"], i32(NF), i32(S), i32(Bn), i32(sm["q"]), i32(npos),
                         stats.data, pos.data, nns.data))
            if pos is not stats:
                extra.append(pos)     # kept to the end of the call (Oclgrind: see alloc)
            st[name] = (stats, nns, complete)
        # a cycle-subseries without a valid value, or fewer valid values than two periods
        # (what a complete series needs): the series comes back NaN and is counted
        if failed_out is None:
            s_stats = st["seasonal"][0].get()
            counts = s_stats[:, 0].reshape(-1, P)
            failed = ((counts == 0).any(axis=1) | (counts.sum(axis=1) < 2 * P)) & np.ones(B,
                                                                                         bool)
        else:
            failed = None
            emit(prepare(dev, self._prog("finish"), "stl_failed", *fixed_local(dev, B),
                         st["seasonal"][0].data, i32(P), i32(B), i32(0 if self.complete else 1),
                         i32(row0), failed_out.data))
        nch = {}
        for name, sm in self.smoothers.items():
            if self.versions[name].version == "flat":
                if self.complete or name == "low_pass":
                    span = min(sm["q"], sm["nmax"])
                elif failed_out is not None:
                    span = sm["nmax"]
                else:
                    a = st[name][1].get()
                    a = a if steps.nns_planes else a.T
                    span = int((a[1] - a[0]).max()) + 1
                nch[name] = max(1, -(-span // self.versions[name].chunk))
        part_bytes = max([B * sm["S"] * sm["NF"] * nch[name] * 8
                          for name, sm in self.smoothers.items() if name in nch] + [0])
        part = alloc((max(part_bytes, 1),)) if part_bytes else None

        tables = {}

        def weight_table(name, prg, nns):
            # complete data, vector outer LOESS: tricube weights per fit point, once per call
            if name not in tables:
                sm = self.smoothers[name]
                S, NF, QW = sm["S"], sm["NF"], sm["qw"]
                wtab, wmom = alloc((S * NF, 2 * QW)), alloc((S * NF, 5))
                emit(prepare(dev, prg, "loess_wtab", *fixed_local(dev, S * NF), sm["fp"],
                             i32(NF), i32(S), nns.data, i32(QW), wtab.data, wmom.data))
                tables[name] = (wtab.data, wmom.data)
                extra.extend((wtab, wmom))
            return tables[name]

        def prepare_loess(name, D, d_b, d_s, W, out, o_b, o_s, o_p, o_off, use_w, otl=1):
            # the LOESS of one smoother (and its interpolation) as prepared launches: set up
            # once per call, enqueued by every iteration
            sm = self.smoothers[name]
            todo = []
            ch = self.versions[name]
            stats, nns, complete = st[name]
            prg = self._loess_prog(ch.version, sm["deg"], use_w, ch, complete, otl)
            S, NF = sm["S"], sm["NF"]
            args = [D.data, i32(d_b), i32(d_s)] + ([W.data] if use_w else []) + [
                sm["seg"], sm["fp"], i32(NF), i32(S), i32(B), nns.data, stats.data,
                i32(0 if complete else 1), out.data,
                i32(o_b), i32(o_s), i32(o_p), i32(o_off)] + hargs
            nfit = B * S * NF
            if ch.version == "outer":
                L = ch.lanes
                if complete and L > 1 and ch.table:
                    args += list(weight_table(name, prg, nns)) + [i32(sm["qw"])]
                todo.append(prepare(dev, prg, "loess_outer", *fixed_local(dev, -(-B // L) * S * NF),
                                    *args))
            elif ch.version == "intragroup":
                todo.append(prepare(dev, prg, "loess_intragroup", nfit * ch.wg, ch.wg, *args))
            else:
                n = nch[name]
                todo.append(prepare(dev, prg, "loess_flat_partial", *fixed_local(dev, nfit * n),
                                    *args, i32(n), part.data))
                T = self.steps.finish_tile if ch.interleave else 0
                if T and S > 1:
                    # the cycle-subseries: tiles of T fit points x T segments, 32 x 8 work-items
                    todo.append(prepare(dev, prg, "loess_flat_finish_tiled",
                                        (-(-NF // T) * T, -(-S // T) * 8, B), (T, 8, 1), *args,
                                        i32(n), part.data))
                else:
                    todo.append(prepare(dev, prg, "loess_flat_finish", *fixed_local(dev, nfit),
                                        *args, i32(n), part.data))
            extend = name == "seasonal"
            nmax = sm["nmax"]
            nj = max(1, min(sm["jump"], nmax - 1))
            if (nj == 1 and not extend) or name == "low_pass":
                return todo     # the low-pass is interpolated where it is used (stl_season)
            nint = max(1, -(-(nmax - 1) // nj))       # intervals of the longest segment
            # intervals per work-item: 0 = a whole segment (CPUs: pocl pays per work-item),
            # else that many (GPUs: 1)
            ipw = self.interp_ipw or nint
            G = -(-nint // ipw)
            iprg = self._prog("interp", extend=extend, out_lanes=otl, hermite=self.hermite)
            nb = Bp // otl if otl > 1 else B      # series, or tiles of otl series
            todo.append(prepare(dev, iprg, "stl_interp", *fixed_local(dev, nb * S * G), out.data,
                                i32(o_b),
                                i32(o_s), i32(o_p), i32(o_off), sm["seg"], i32(S), i32(nb),
                                i32(G), i32(sm["jump"]), i32(ipw), *hargs))
            return todo

        prepared = {}

        def run(key, make):
            # enqueue the prepared launches of ``key``, prepared by ``make()`` at first use (in
            # the order of the first iteration: a weight table is launched while preparing)
            todo = prepared.get(key)
            if todo is None:
                todo = prepared[key] = make()
            for go in todo:
                emit(go)

        def run_loess(name, *args, use_w, otl=1):
            run((name, use_w), lambda: prepare_loess(name, *args, use_w, otl))

        use_w = False
        outer = self.p["outer_iter"]
        ma = steps.ma(ma_prg, C, N, P, Bp, Ll, ring, lp0)
        season = prepare(dev, season_prg, "stl_season", *fixed_local(dev, (N, Bp)), y.data,
                         C.data, lp.data, i32(N), i32(P), i32(B), i32(Bp), s.data, u.data,
                         i32(self.p["low_pass_jump"]), *hargs)
        for k in range(outer + 1):
            for it in range(self.p["inner_iter"]):
                # the weights in the cycle-subseries layout change only with a robustness
                # pass: gathered by the first inner iteration after it
                w = use_w and it == 0
                run(("gather", w), lambda: [steps.gather(gprg, Ls, y, t, rw, N, P, K, B, Bp,
                                                         w, z, rwz)])
                run_loess("seasonal", z, P * K * Ls, K * Ls, rwz, C, N + 2 * P, 1, P, 0,
                          use_w=use_w, otl=Ll)
                emit(ma)
                run_loess("low_pass", lp0, N * Ll, 0, None, lp, N, 0, 1, -1, use_w=False)
                emit(season)
                run_loess("trend", u, N * Lt, 0, rwt, t, N, 0, 1, -1, use_w=use_w)
                if passes is not None:
                    passes.extend(device_marker(dev))
            if k == outer:
                break
            run("robust", lambda: [steps.robust(robust_prg, y, t, s, N, B, u, rw, rwt)])
            use_w = True
        prepared.clear()
        if sim:
            q.finish()
            mine = (y, t, s, rw_out)          # the caller's slot arrays stay
            for a in extra + [u, rw, lp0, lp, C, ring, slp, z, rwz, part, rwt, z0] + [
                    v[i] for v in st.values() for i in (0, 1)]:
                if (a is not None and a is not rw and a is not z
                        and not any(a is b for b in mine)):
                    a.data.release()
            for a in (rw, z):
                if a is not rw_out:
                    a.data.release()
        # otherwise the pooled buffers go back to the device's scratch pool when dropped (the
        # queue is in order: a later user of one runs after these kernels), or stay with the
        # recording of this call for the next of its shape
        if rkey is not None:
            rec = self._recorder.add(dev, rkey, seq, temps, slots, hand=hand)
            if rec is not None and keep is not None:
                keep.append(rec)
        if keep is not None:
            keep.extend(a for a in extra + [u, rw, lp0, lp, C, ring, slp, z, rwz, part, rwt, z0]
                        + [v[i] for v in st.values() for i in (0, 1)] if a is not None)
        return failed


def _smoothers(dev, N, p) -> dict:
    """The three smoothers' tables of series of ``N`` values under parameters ``p``: segment
    lengths, fit points and anchors as device buffers (``seg``, ``fp``, ``an``), with their
    sizes and LOESS settings. Read-only once made (the kernels only read them)."""
    P = p["period"]
    ctx = dev.context
    import pyopencl as cl
    mf = cl.mem_flags

    def ibuf(a):
        # made once per device and content (a few KB of ints from the parameters): a
        # later call with the same tables copies nothing from the host
        a = np.ascontiguousarray(a, dtype=np.int32)
        return dev.state.constant(("stl-table", a.shape, a.tobytes()), lambda: cl.Buffer(
            ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a))

    # segment tables: seasonal = P cycle-subseries (grid 1..k_j plus end fits 0, k_j+1)
    seg_s = np.array([(N - j - 1) // P + 1 for j in range(P)], np.int32)
    tabs = []
    for k in seg_s:
        fp, an = fit_table(int(k), p["seasonal"], p["seasonal_jump"])
        tabs.append((fp + [0, int(k) + 1], an + [0, int(k) + 1]))
    NFs = max(len(t[0]) for t in tabs)
    fps = np.full((P, NFs), -1, np.int32)
    ans = np.full((P, NFs), -1, np.int32)
    for j, (fp, an) in enumerate(tabs):
        fps[j, :len(fp)] = fp
        ans[j, :len(an)] = an
    smoothers = {}
    for name, S, seg, fp, an, q, deg, jump in (
            ("seasonal", P, seg_s, fps, ans, p["seasonal"], p["seasonal_deg"],
             p["seasonal_jump"]),
            ("trend", 1, np.array([N], np.int32), *Runner._one(N, p["trend"], p["trend_jump"]),
             p["trend"], p["trend_deg"], p["trend_jump"]),
            ("low_pass", 1, np.array([N], np.int32),
             *Runner._one(N, p["low_pass"], p["low_pass_jump"]), p["low_pass"],
             p["low_pass_deg"], p["low_pass_jump"])):
        smoothers[name] = dict(S=S, NF=fp.shape[1], seg=ibuf(seg), fp=ibuf(fp), an=ibuf(an),
                               q=q, deg=deg, jump=jump, nmax=int(seg.max()), seg_np=seg,
                               qw=min(q, int(seg.max())))
    return smoothers
