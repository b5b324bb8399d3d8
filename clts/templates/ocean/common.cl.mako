## Shared pieces of the ocean kernels: the real type, no contraction of a*b+c into fma (the
## float64 results then round like the numpy reference, operation for operation), the Superbee
## face flux, and the cell index of the [x][y][z] grid (z contiguous).
<%include file="/common/real.cl.mako"/>
#pragma OPENCL FP_CONTRACT OFF

/* index of cell (i, j, k) of an nx x ny x nz grid, z contiguous */
#define CELL(i, j, k) (((size_t)(i) * (size_t)ny + (size_t)(j)) * (size_t)nz + (size_t)(k))

/* Superbee flux through the face between cells 0 and +1 along one axis.
   vel: the raw face velocity (its sign picks the upwind side); fv: the transporting velocity
   (vel times the metric factor of the axis); q*: tracer at cells -1, 0, +1, +2; m*: face masks
   of faces -1, 0, +1 (1 where both cells are wet); dx: the face's grid spacing. */
inline real superbee_flux(const real vel, const real fv, const real qm1, const real q0,
                          const real qp1, const real qp2, const real mm1, const real m0,
                          const real mp1, const real dx, const real dt)
{
    const real rjp = (qp2 - qp1) * mp1;
    const real rj = (qp1 - q0) * m0;
    const real rjm = (q0 - qm1) * mm1;
    const real den = fabs(rj) < (real)1e-20 ? (real)1e-20 : rj;
    const real r = (vel > (real)0 ? rjm : rjp) / den;
    const real cr = fmax((real)0, fmax(fmin((real)1, (real)2 * r), fmin((real)2, r)));
    const real ucfl = fabs(fv * dt / dx);
    return fv * (qp1 + q0) * (real)0.5 - fabs(fv) * (((real)1 - cr) + ucfl * cr) * rj * (real)0.5;
}
