/*
 * shim.h -- force-included (-include) by bench/windows.sh's MSVC-mode
 * compile: clang --target=x86_64-pc-windows-msvc (and aarch64) over Wine's
 * CRT and Windows headers (Debian's libwine-dev), which stand in for the
 * UCRT and the Windows SDK.  Only what those headers lack or get wrong in
 * that mode, each named:
 * - fma, fmaf: Wine 8's msvcrt math.h does not declare them; the UCRT's
 *   math.h does (since Visual Studio 2013), with these types.
 * - _InterlockedCompareExchange128: Wine's winnt.h defines it as an inline
 *   function when the compiler is clang, which clang in MSVC mode refuses
 *   (it is a builtin there); renamed out of the way (gelu_ext does not use it).
 * Nothing here declares anything gelu_ext's own code calls except fma and
 * fmaf: every other name it uses comes from Wine's headers.
 */
double __cdecl fma(double, double, double);
float __cdecl fmaf(float, float, float);
#define _InterlockedCompareExchange128 gx_shim_wine_InterlockedCompareExchange128
