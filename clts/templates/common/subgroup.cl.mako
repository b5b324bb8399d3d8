## The attributes that fit a kernel to a GPU family's SIMD and registers, nothing where n = 0.
## A template declares the namespace sg on its first line and calls them on the lines before
## its __kernel, each line ending in a backslash (so that no blank line is rendered).
##   reqd(n)   the sub-group size n the kernel requires where the compiler knows it
##             (cl_intel_required_subgroup_size: Intel's GPU compiler picks SIMD8/16/32 otherwise)
##   waves(n)  the fewest waves per SIMD the kernel's registers must leave room for on AMD GPUs
##             (amdgpu_waves_per_eu: LLVM otherwise may take registers down to 1 or 2 waves)
<%def name="reqd(n)">\
% if n:
#ifdef cl_intel_required_subgroup_size
__attribute__((intel_reqd_sub_group_size(${n})))
#endif
% endif
</%def>
<%def name="waves(n)">\
% if n:
#ifdef __AMDGCN__
__attribute__((amdgpu_waves_per_eu(${n})))
#endif
% endif
</%def>
