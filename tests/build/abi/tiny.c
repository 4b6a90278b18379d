/* A tiny library with a stable node and an unstable one, built four ways by
 * tests/build/abi_selftest.sh to show that abidiff with abi/stable.supp
 * fails on an incompatible change to a stable function or struct and lets
 * an unstable one through. */
#define API __attribute__((visibility("default")))

struct tiny_info {
	int a;
#ifdef V2_STABLE_STRUCT
	long long b; /* a member's type and the struct's size change */
#else
	int b;
#endif
};

API int tiny_info(struct tiny_info *out); /* node TXSCALE_0.1 */
API int tiny_info(struct tiny_info *out)
{
	out->a = 1;
	out->b = 2;
	return 0;
}

#ifdef V2_STABLE_PARAM
API long tiny_add(long x, long y); /* node TXSCALE_0.1: a parameter's type changes */
API long tiny_add(long x, long y)
#else
API int tiny_add(int x, int y);
API int tiny_add(int x, int y)
#endif
{
	return x + y;
}

#ifdef V2_UNSTABLE
API long tiny_fast(long x, int y); /* node TXSCALE_UNSTABLE_0.1.0: may change */
API long tiny_fast(long x, int y)
{
	return x * y;
}
#else
API int tiny_fast(int x);
API int tiny_fast(int x)
{
	return x * 2;
}
#endif

#ifdef V2_ADD
API int tiny_new(void); /* added to the stable surface: compatible */
API int tiny_new(void)
{
	return 3;
}
#endif
