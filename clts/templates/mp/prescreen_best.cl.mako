## preSCRIMP's screen (pre_fused, pre_fused32): the work-item's windows' running best, FC
## 8-wide vectors of distances and of indices named by cb / ci (a format taking the vector's
## number: "cb{}" or "cb[{}]"), read from and written back to colP / colI with static lanes only
## (no private array: NVIDIA's back end kept one on the stack). A whole block with vector loads
## and stores; the last, partial block lane by lane (lanes past l: inf / -1, never stored).
<%def name="load(cb, ci, FC)">\
    if (jb + FW <= l) {
% for h in range(FC):
        ${cb.format(h)} = vload8(0, colP + jb + ${8 * h});
        ${ci.format(h)} = convert_long8(vload8(0, colI + jb + ${8 * h}));
% endfor
    } else {
% for h in range(FC):
        ${cb.format(h)} = (double8)(${", ".join(f"jb + {8 * h + c} < l ? colP[jb + {8 * h + c}] : INFINITY" for c in range(8))});
        ${ci.format(h)} = (long8)(${", ".join(f"jb + {8 * h + c} < l ? (long)colI[jb + {8 * h + c}] : -1" for c in range(8))});
% endfor
    }
</%def>
<%def name="store(cb, ci, FC)">\
    if (jb + FW <= l) {
% for h in range(FC):
        vstore8(${cb.format(h)}, 0, colP + jb + ${8 * h});
        vstore8(convert_int8(${ci.format(h)}), 0, colI + jb + ${8 * h});
% endfor
    } else {
% for h in range(FC):
%   for c in range(8):
        if (jb + ${8 * h + c} < l) {
            colP[jb + ${8 * h + c}] = ${cb.format(h)}.s${c};
            colI[jb + ${8 * h + c}] = (int)${ci.format(h)}.s${c};
        }
%   endfor
% endfor
    }
</%def>
