"""clts.stl: batched STL decomposition with missing values, all steps in OpenCL kernels."""
from __future__ import annotations

import numpy as np

from ..runtime import get_device, launch
from ..runtime.integrations import time_axis_of
from ..timeaxis import check_fits, period_of
from ..runtime.arrays import is_device_array
from ..runtime.memory import scratch
from ..runtime.programs import build_program, prebuild
from ..runtime.outputs import deliver, in_input_layout, out_arrays, view_as
from ..runtime.pipeline import device_marker
from ..runtime.resident import Lazy, LazyDict, device_series
from ..vocabulary import renamed
from .chunks import COMPONENTS as _COMPONENTS, run_device, run_host
from .chunks import validated as _validated
from .params import QUAD_DET_TOL, check_arguments, outputs_of, periodic_mean  # noqa: F401
from .params import periodic_window
# (check_arguments: public here, for callers that check before they start)
from .plan import LoessChoice, Problem, fit_table, make_plan
from .result import STLResult, slope_per_step  # noqa: F401 (public here)
from .steps import Steps


class _Runner:
    """Builds the programs and per-call tables for one (device, dtype, length, parameters)."""

    def __init__(self, dev, dtype, N, p, versions: dict, complete: bool, interp_ipw=0,
                 steps="series"):
        self.dev, self.dtype, self.N, self.p = dev, np.dtype(dtype), N, p
        self.interp_ipw = int(interp_ipw)
        self.steps = Steps(self, steps)
        self.hermite = p["interpolation"] == "hermite"
        self.real = "double" if self.dtype == np.float64 else "float"
        self.complete = complete
        P = p["period"]
        self.K = -(-N // P)
        self.versions = versions
        self._prebuilt = False
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
        self.smoothers = {}
        for name, S, seg, fp, an, q, deg, jump in (
                ("seasonal", P, seg_s, fps, ans, p["seasonal"], p["seasonal_deg"],
                 p["seasonal_jump"]),
                ("trend", 1, np.array([N], np.int32), *self._one(N, p["trend"], p["trend_jump"]),
                 p["trend"], p["trend_deg"], p["trend_jump"]),
                ("low_pass", 1, np.array([N], np.int32),
                 *self._one(N, p["low_pass"], p["low_pass_jump"]), p["low_pass"],
                 p["low_pass_deg"], p["low_pass_jump"])):
            self.smoothers[name] = dict(S=S, NF=fp.shape[1], seg=ibuf(seg), fp=ibuf(fp),
                                        an=ibuf(an), q=q, deg=deg, jump=jump,
                                        nmax=int(seg.max()), seg_np=seg,
                                        qw=min(q, int(seg.max())))

    @staticmethod
    def _one(n, q, jump):
        fp, an = fit_table(n, q, jump)
        return np.array([fp], np.int32), np.array([an], np.int32)

    def _spec(self, name, **kw):
        return f"stl/{name}.cl.mako", dict(real=self.real, **kw)

    def _prog(self, name, **kw):
        return build_program(self.dev, *self._spec(name, **kw))

    def _kernel(self, prg, name):
        # Oclgrind's uninitialised-value checker loses track of arguments when a kernel object
        # is re-used by a later call: give the simulator fresh kernel objects.
        if getattr(self.dev.info, "simulator", False):
            import pyopencl as cl
            return cl.Kernel(prg.cl_program, name)
        return prg.kernel(name)

    def _loess_prog(self, *args, **kwargs):
        return build_program(self.dev, *self._loess_spec(*args, **kwargs))

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
            progs.append(("nns", st.nns_kw(complete, sm["nmax"])))
            ws = (False, True) if self.p["outer_iter"] > 0 and name != "low_pass" else (False,)
            loess += [(ch.version, sm["deg"], w, ch, complete, otl) for w in ws]
            nj = max(1, min(sm["jump"], sm["nmax"] - 1))
            if name == "seasonal" or (name == "trend" and nj > 1):
                progs.append(("interp", dict(extend=name == "seasonal", out_lanes=otl, hermite=hm)))
        prebuild(self.dev, [self._spec(n, **kw) for n, kw in progs]
                 + [self._loess_spec(*a) for a in loess])

    def run(self, y, s, t, rw_out=None, passes=None, failed_out=None, row0=0, keep=None):
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
        read)."""
        import pyopencl.array as cla
        dev, q, dt = self.dev, self.dev.queue, self.dtype
        B, N, P, K = y.shape[0], self.N, self.p["period"], self.K
        i32 = np.int32
        sim = getattr(dev.info, "simulator", False)

        def alloc(shape, dtype=dt):
            # on Oclgrind, host-initialised buffers: its uninitialised-value checker misreads
            # device-written buffers of a second call in the same process
            if sim:
                return cla.to_device(q, np.zeros(shape, dtype))
            # the device's scratch pool: a fresh buffer costs a page fault per 4 KB the first
            # time a kernel touches it (docs/performance.md, "Figures behind the code")
            return scratch(dev, shape, dtype)

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
        season = self._kernel(self._prog("gather", **steps.gather_kw(Lt, Ll, hm)), "stl_season")
        ma_prg = self._prog("ma", **steps.ma_kw(Ll))
        robust_prg = self._prog("robust", **steps.robust_kw(Lt))

        def run_gather(with_w):
            steps.gather(gprg, Ls, y, t, rw, N, P, K, B, Bp, with_w, z, rwz)

        g1 = self._prog("gather", **steps.gather_kw(1, 1, hm))
        launch(dev, self._kernel(g1, "stl_init"), Bp * N, None, np.int64(B * N),
               np.int64(Bp * N if Lt > 1 else 0), t.data, s.data, rw.data, rwt.data)
        # validity of the cycle-subseries (plain layout) for their NNS: y gathered (t = 0)
        z0 = alloc((B, P, K)) if not self.complete else z
        if not self.complete:
            steps.gather(g1, 1, y, t, rw, N, P, K, B, B, 0, z0, rwz)
        # NNS once per call, per smoother
        layouts = {"seasonal": (z0, P * K, K), "trend": (y, N, 0), "low_pass": (y, N, 0)}
        st = {}
        extra = []
        for name, sm in self.smoothers.items():
            M, m_b, m_s = layouts[name]
            complete = self.complete or name == "low_pass"
            nprg = self._prog("nns", **steps.nns_kw(complete, sm["nmax"]))
            S, NF = sm["S"], sm["NF"]
            Bn = 1 if complete else B  # complete data: one set of windows serves every series
            stats = alloc((Bn * S, 2), i32)
            # four ints per fit point, or (GPUs) four planes: lo, hi, h, fallback point
            nns = alloc((4, Bn * S * NF) if steps.nns_planes else (Bn * S * NF, 4), i32)
            npos = sm["nmax"]
            # packed valid positions (the NaN index computation); none with complete data
            pos = stats if complete else alloc((Bn * S, npos), i32)
            steps.stats(nprg, complete, sm["nmax"], M, m_b, m_s, sm["seg"], S, Bn, npos, stats,
                        pos)
            launch(dev, self._kernel(nprg, "stl_nns"), Bn * S * NF, None, sm["seg"], sm["fp"],
                   sm["an"], i32(NF), i32(S), i32(Bn), i32(sm["q"]), i32(npos), stats.data,
                   pos.data, nns.data)
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
            launch(dev, self._kernel(self._prog("finish"), "stl_failed"), B, None,
                   st["seasonal"][0].data, i32(P), i32(B), i32(0 if self.complete else 1),
                   i32(row0), failed_out.data)
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
                launch(dev, self._kernel(prg, "loess_wtab"), S * NF, None, sm["fp"], i32(NF),
                       i32(S), nns.data, i32(QW), wtab.data, wmom.data)
                tables[name] = (wtab.data, wmom.data)
                extra.extend((wtab, wmom))
            return tables[name]

        def run_loess(name, D, d_b, d_s, W, out, o_b, o_s, o_p, o_off, use_w, otl=1):
            sm = self.smoothers[name]
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
                launch(dev, self._kernel(prg, "loess_outer"), -(-B // L) * S * NF, None, *args)
            elif ch.version == "intragroup":
                launch(dev, self._kernel(prg, "loess_intragroup"), nfit * ch.wg, ch.wg, *args)
            else:
                n = nch[name]
                launch(dev, self._kernel(prg, "loess_flat_partial"), nfit * n, None, *args, i32(n),
                       part.data)
                T = self.steps.finish_tile if ch.interleave else 0
                if T and S > 1:
                    # the cycle-subseries: tiles of T fit points x T segments, 32 x 8 work-items
                    launch(dev, self._kernel(prg, "loess_flat_finish_tiled"),
                           (-(-NF // T) * T, -(-S // T) * 8, B), (T, 8, 1), *args, i32(n),
                           part.data)
                else:
                    launch(dev, self._kernel(prg, "loess_flat_finish"), nfit, None, *args,
                           i32(n), part.data)
            extend = name == "seasonal"
            nmax = sm["nmax"]
            nj = max(1, min(sm["jump"], nmax - 1))
            if (nj == 1 and not extend) or name == "low_pass":
                return      # the low-pass is interpolated where it is used (stl_season)
            nint = max(1, -(-(nmax - 1) // nj))       # intervals of the longest segment
            # intervals per work-item: 0 = a whole segment (CPUs: pocl pays per work-item),
            # else that many (GPUs: 1)
            ipw = self.interp_ipw or nint
            G = -(-nint // ipw)
            ik = self._kernel(self._prog("interp", extend=extend, out_lanes=otl,
                                         hermite=self.hermite), "stl_interp")
            nb = Bp // otl if otl > 1 else B      # series, or tiles of otl series
            launch(dev, ik, nb * S * G, None, out.data, i32(o_b), i32(o_s), i32(o_p), i32(o_off),
                   sm["seg"], i32(S), i32(nb), i32(G), i32(sm["jump"]), i32(ipw), *hargs)

        use_w = False
        outer = self.p["outer_iter"]
        for k in range(outer + 1):
            for it in range(self.p["inner_iter"]):
                # the weights in the cycle-subseries layout change only with a robustness
                # pass: gathered by the first inner iteration after it
                run_gather(use_w and it == 0)
                run_loess("seasonal", z, P * K * Ls, K * Ls, rwz, C, N + 2 * P, 1, P, 0, use_w,
                          otl=Ll)
                steps.ma(ma_prg, C, N, P, Bp, Ll, ring, lp0)
                run_loess("low_pass", lp0, N * Ll, 0, None, lp, N, 0, 1, -1, False)
                launch(dev, season, (N, Bp), None, y.data, C.data, lp.data, i32(N), i32(P),
                       i32(B), i32(Bp), s.data, u.data, i32(self.p["low_pass_jump"]), *hargs)
                run_loess("trend", u, N * Lt, 0, rwt, t, N, 0, 1, -1, use_w)
                if passes is not None:
                    passes.extend(device_marker(dev))
            if k == outer:
                break
            steps.robust(robust_prg, y, t, s, N, B, u, rw, rwt)
            use_w = True
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
        # queue is in order: a later user of one runs after these kernels)
        if keep is not None:
            keep.extend(a for a in extra + [u, rw, lp0, lp, C, ring, slp, z, rwz, part, rwt, z0]
                        + [v[i] for v in st.values() for i in (0, 1)] if a is not None)
        return failed


@renamed(loess_version="version", loess_params="**plan_overrides")
def stl(y, period=None, *, seasonal=7, trend=None, low_pass=None, seasonal_deg=1, trend_deg=1,
        low_pass_deg=1, seasonal_jump=1, trend_jump=1, low_pass_jump=1, robust=False,
        inner_iter=None, outer_iter=None, version="auto", r_defaults=False, device=None,
        interpolation="linear", time_axis=None, progress=True, out=None, outputs=None,
        **plan_overrides):
    """Batched STL decomposition (seasonal + trend + remainder) with missing values.

    Every series of the batch is decomposed by the LOESS-based procedure of Cleveland et al.,
    with the parameters, defaults and results of ``statsmodels.tsa.seasonal.STL``, as OpenCL
    kernels that process the whole batch at once (the GPU method of Serykh et al.).

    Parameters
    ----------
    y : array_like, shape (batch, time) or (time,), or any shape with ``time_axis``
        float32 or float64 series (other real types are converted to float64); NaN marks a
        missing value. +-inf is rejected. A series needs at least two periods. A pandas
        Series / DataFrame (one series per column, time down the rows) or an xarray DataArray
        comes back labelled: the components with the input's index / coordinates. A
        ``pyopencl.array.Array`` (C-contiguous [batch, time] or [time], float32 / float64, in
        the context of ``device``) stays on the device: device arrays out, nothing read back
        or waited for inside the call (docs/device-arrays.md).
    period : int, optional
        Length of the seasonal cycle, >= 2. None: from the frequency of a pandas / xarray
        datetime time index by statsmodels' rules (monthly 12, quarterly 4, weekly 52, daily 7,
        business-daily 5, hourly 24).
    seasonal, trend, low_pass : int, optional
        LOESS window lengths (odd, >= 3). ``seasonal=7``, or ``"periodic"`` (R's
        ``s.window = "periodic"``: window 10 n + 1, degree 0, then each cycle position's mean); ``trend`` defaults to the next odd
        integer of ceil(1.5 period / (1 - 1.5 / seasonal)) and must exceed ``period``;
        ``low_pass`` to the smallest odd integer > ``period``.
    seasonal_deg, trend_deg, low_pass_deg : {0, 1, 2}, optional
        Degrees of the local polynomials (default 1).
    seasonal_jump, trend_jump, low_pass_jump : int, optional
        Fit every ``jump``-th point and interpolate between them (default 1).
    robust : bool, optional
        Bisquare robustness weights from 6 x the median absolute residual.
    inner_iter, outer_iter : int, optional
        Iterations; default 5 / 0, or 2 / 15 with ``robust=True`` (statsmodels' choice).
    version : {"auto", "outer", "intragroup", "flat"}, optional
        LOESS code version; "auto" picks per smoother from the device profile.
        ``loess_version`` is its deprecated name (a DeprecationWarning, one release).
    r_defaults : bool, optional
        Take R's ``stl`` defaults for the jumps (ceil(window / 10)), degrees and iterations
        where they are left at statsmodels' defaults.
    device : int, str or Device, optional
        Device index, name substring or slug (``clts devices``); the default device if None.
    interpolation : {"linear", "hermite"}, optional
        Between jumped fits: linear (statsmodels and R) or cubic Hermite from the fitted values
        and the slopes of the local fits (stlplus and Serykh et al.).
    time_axis : int, optional
        The axis of ``y`` that is time: default the last for numpy arrays (``[batch..., time]``,
        any number of other axes), the index of a pandas object, the ``time`` dimension of a
        DataArray (or a dimension name). A ``period`` that leaves fewer than two periods on
        that axis but fits another is a ValueError naming the ``time_axis=`` that reads it
        (docs/api-conventions.md, "Where time is").
    progress : bool, optional
        A progress bar (tqdm, shown after half a second): over device chunks, or over the
        iterations of a call in one chunk.
    out : dict of numpy arrays, or STLResult, optional
        Arrays that receive the components: a dict with any of ``seasonal``, ``trend``,
        ``resid``, ``weights`` (numpy arrays of the input's shape and of the result's dtype,
        any layout), or the result of an earlier call of the same shape (its numpy components;
        two results used in turn for a loop). Results are the same bits as without ``out=``,
        without the page faults of fresh arrays. Checked before any work: the shape and
        dtype, writeable, no overlap with ``y`` or with one another.
    outputs : str or sequence of str, optional
        The components to return, of ``seasonal``, ``trend``, ``resid``, ``weights``
        (default all); the others are None in the result. On a GPU only what they need
        crosses the link (``outputs=("trend",)``: the trend alone, half the bytes of the
        default's seasonal and trend), and the host skips the residual and weights passes it
        is not asked for. The kernels compute the same either way (each component feeds the
        next iteration); the returned components are the same bits as without ``outputs``.
    **plan_overrides
        Force tunables for this call (each a profile key of section ``stl``): ``lanes``,
        ``wg``, ``chunk``, ``table`` (tricube weight tables for the vector outer LOESS on
        complete data), ``interleave``, ``interp_per_item`` (jump intervals filled per
        work-item, 0 = a whole segment) and the thresholds of ``version="auto"``
        (``jump_threshold``, ``intragroup_max_q``, ``parallelism_threshold``), and
        ``mapping`` ("series" or "coalesced": the kernels of the steps around the LOESS,
        docs/stl.md). ``loess_params={...}`` is their deprecated form (a DeprecationWarning, one release).

    Returns
    -------
    STLResult
        ``seasonal``, ``trend``, ``resid``, ``weights`` and ``observed`` (the input), shaped
        and labelled like ``y``, and ``diagnostics``; the ``out=`` arrays where given. Device
        arrays for a device array ``y`` (``n_failed`` then read on first access).

    Raises
    ------
    ValueError
        Bad window, degree, jump or iteration values, a series shorter than two periods,
        +-inf values, or an unknown ``version`` / ``interpolation``.
    TypeError
        ``y`` is not real numeric.
    clts.DeviceError
        float64 data on a device without ``cl_khr_fp64``.

    Notes
    -----
    Each LOESS fit uses the ``min(q, n_valid)`` valid points nearest to it. A series with a
    cycle-subseries without any valid value, or with fewer valid values than two periods' worth,
    comes back NaN (weights 0) and is counted in ``diagnostics["n_failed"]``. Details:
    ``docs/stl.md``.

    References
    ----------
    .. [1] R. B. Cleveland, W. S. Cleveland, J. E. McRae, I. Terpenning, "STL: A Seasonal-Trend
       Decomposition Procedure Based on Loess", Journal of Official Statistics 6(1), 1990.
    .. [2] D. Serykh, S. Oehmcke, C. Oancea, D. Masiliunas, J. Verbesselt et al.,
       "Seasonal-Trend Time Series Decomposition on Graphics Processing Units", IEEE BigData
       2023.

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = np.arange(120)
    >>> y = np.sin(2 * np.pi * t / 12) + 0.02 * t
    >>> y2 = np.stack([y, 3 * y])
    >>> y2[1, 30:35] = np.nan                      # missing values
    >>> r = clts.stl(y2, period=12, seasonal=13)
    >>> r.seasonal.shape, r.diagnostics["n_failed"]
    ((2, 120), 0)
    >>> bool(np.allclose(r.seasonal[0] + r.trend[0] + r.resid[0], y))
    True
    >>> bool(np.isnan(r.resid[1, 30]))
    True
    """
    settings = dict(seasonal=seasonal, trend=trend, low_pass=low_pass, seasonal_deg=seasonal_deg,
                    trend_deg=trend_deg, low_pass_deg=low_pass_deg, seasonal_jump=seasonal_jump,
                    trend_jump=trend_jump, low_pass_jump=low_pass_jump, robust=robust,
                    inner_iter=inner_iter, outer_iter=outer_iter, r_defaults=r_defaults,
                    interpolation=interpolation)
    wanted = outputs_of(outputs, _COMPONENTS)
    if is_device_array(y):
        return _stl_device(y, period, settings, device=device, version=version,
                           time_axis=time_axis, out=out, plan_overrides=plan_overrides,
                           wanted=wanted)
    # the edge: labels and the time axis, once; the core sees [batch, time]
    labels = time_axis_of(y, time_axis, -1)
    if period is None:
        period = period_of(labels.times())
    if isinstance(period, (int, np.integer)) and not isinstance(period, bool) and period >= 2:
        check_fits(np.shape(y), labels.axis, lambda n: n >= 2 * period,
                   f"period={int(period)} (two periods: {2 * int(period)} values)")
    y_in = labels.to_last(y)
    y, complete = _validated(y_in)
    y2 = y.reshape(-1, y.shape[-1])
    dev = get_device(device)
    # the caller's out= arrays (checked before any work), written in place where they can be
    # viewed as [batch, time]
    shape_in = np.moveaxis(y, -1, labels.axis).shape
    given = out_arrays(out, {k: (shape_in, y2.dtype) for k in wanted},
                       {"y": y_in}, "stl")
    last = {k: np.moveaxis(a, labels.axis, -1) for k, a in given.items()}
    dests = {k: view_as(a, y2.shape) for k, a in last.items()}
    comps, failed, diag = decompose(y2, period, settings, dev, version=version, dests=dests,
                                    progress=progress, plan_overrides=plan_overrides,
                                    complete=complete, wanted=wanted)
    diag = dict(n_failed=int(failed.sum()), failed=failed, **diag)
    wrapped = {}
    for key in _COMPONENTS:
        if key not in wanted:
            wrapped[key] = None
            continue
        a = comps[key].reshape(y.shape)
        if key in given:      # the out= array (filled here unless the kernels wrote it)
            deliver(last[key], a)
            wrapped[key] = labels._wrap_series(given[key])
        else:
            wrapped[key] = in_input_layout(labels, a)
    if labels.labelled or y.ndim > 2:
        diag["failed"] = labels.per_series(failed.reshape(y.shape[:-1]), "failed")
    return STLResult(**wrapped, diagnostics=diag, labels=labels, observed=labels.series(y))


def decompose(y2, period, settings: dict, dev, *, version="auto", dests=None, progress=True,
              plan_overrides=None, keep=None, complete=None, wanted=_COMPONENTS):
    """The core of :func:`stl` (and of MSTL's rounds): the STL of the rows of ``y2`` (batch,
    time), a checked C-contiguous numpy array or a device array (:func:`_stl_device`'s
    checks), with the keyword ``settings`` of :func:`stl`. Returns ``(components, failed,
    diagnostics)``: components by name (``_COMPONENTS``) of y2's shape and kind (numpy or
    device arrays; numpy into ``dests`` where given), the failed-series mask (numpy bool, or
    a device array of bytes: nothing read back) and the diagnostics other than the failures.
    ``keep``: a list that receives the temporaries of a device call's queued kernels;
    ``complete``: whether numpy ``y2`` has no NaN, when the caller knows (else scanned);
    ``wanted``: the components the caller returns (numpy data: the others are not brought to
    the host and come back None, but the seasonal and trend of a residual)."""
    on_dev = is_device_array(y2)
    B, N = y2.shape
    seasonal, seasonal_deg, periodic = periodic_window(settings["seasonal"],
                                                       settings["seasonal_deg"], N)
    p = check_arguments(N, period, **dict(settings, seasonal=seasonal,
                                          seasonal_deg=seasonal_deg), version=version)
    # device data are not scanned (a host read): they take the missing-value code path
    if on_dev:
        complete = False
    elif complete is None:
        complete = bool(np.isfinite(y2).all())
    dev.require_dtype(y2.dtype)
    plan = make_plan(dev, Problem(p, B, N), version=version, **(plan_overrides or {}))
    runner = _Runner(dev, y2.dtype, N, p, {"seasonal": plan.seasonal, "trend": plan.trend,
                                           "low_pass": plan.low_pass},
                     complete=complete, interp_ipw=plan.interp_per_item, steps=plan.steps)
    diag = dict(params=dict(p, periodic=periodic),
                loess_versions={k: getattr(plan, k).version
                                for k in ("seasonal", "trend", "low_pass")})
    run = run_device if on_dev else run_host
    comps, failed = run(dev, runner, p, periodic, y2, dests=dests or {}, progress=progress,
                        wanted=wanted, keep=keep)
    return comps, failed, diag


def _stl_device(y, period, settings, *, device, version, time_axis, out, plan_overrides,
                wanted=_COMPONENTS):
    """:func:`stl` of a device array: checked without a copy or a read, decomposed by
    :func:`decompose`, results on the device (``n_failed`` read on first access)."""
    dev = get_device(device)
    y2 = device_series(y, dev, time_axis)
    if period is None:
        raise ValueError("period is required for a device array y (it has no time index to "
                         "read it from)")
    if out is not None:
        raise TypeError("stl: out= takes numpy arrays; the results of a device array are "
                        "fresh device arrays")
    keep = []
    comps, failed, diag = decompose(y2, period, settings, dev, version=version,
                                    plan_overrides=plan_overrides, keep=keep, progress=False)
    shape = tuple(y.shape)
    # every component is computed on the device (each feeds the next iteration): the ones
    # not asked for are dropped
    comps = {k: (a.reshape(shape) if k in wanted else None) for k, a in comps.items()}
    failed = failed.reshape(shape[:-1])
    diag = LazyDict(n_failed=Lazy(lambda: int(np.count_nonzero(failed.get()))), failed=failed,
                    **diag)
    r = STLResult(**comps, diagnostics=diag, labels=None, observed=y)
    r._keep = keep
    return r
