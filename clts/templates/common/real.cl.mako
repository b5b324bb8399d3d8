## The floating-point type of a kernel: `real`, its vector types realN, and helpers.
## Include it first: <%include file="/common/real.cl.mako"/>
% if real == "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define REAL_MAX DBL_MAX
#define REAL_EPS DBL_EPSILON
% else:
#define REAL_MAX FLT_MAX
#define REAL_EPS FLT_EPSILON
% endif
typedef ${real} real;
typedef ${real}2 real2;
typedef ${real}4 real4;
typedef ${real}8 real8;
typedef ${real}16 real16;
#define REAL_NAN ((real)NAN)
