## The attribute that makes a kernel require sub-group size n where the compiler knows it
## (cl_intel_required_subgroup_size: Intel's GPU compiler picks SIMD8/16/32 otherwise); nothing
## for n = 0. A template declares the namespace sg on its first line and calls sg.reqd(n) on
## the line before its __kernel, each line ending in a backslash (so that no blank line is
## rendered).
<%def name="reqd(n)">\
% if n:
#ifdef cl_intel_required_subgroup_size
__attribute__((intel_reqd_sub_group_size(${n})))
#endif
% endif
</%def>
