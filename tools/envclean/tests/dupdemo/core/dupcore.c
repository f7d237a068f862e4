/* libdupcore: the native core dupdemo ships in dupdemo/lib. Built twice by the tests:
   ABI 2 (the one dupdemo needs) and, with -DDUPCORE_OLD, an older ABI 1 without
   dupcore_register_v2, to stand for another build reached through LD_LIBRARY_PATH. */
#ifdef DUPCORE_OLD
int dupcore_abi(void) { return 1; }
#else
static int count;

int dupcore_abi(void) { return 2; }

int
dupcore_register_v2(const char *name)
{
	(void)name;
	return ++count;
}
#endif
