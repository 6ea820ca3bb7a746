/* bench-noop: does nothing, linked statically.  The benchmarks time it with the
 * same fork+exec as the tools: the least any program can cost to launch. */
int main(void)
{
	return 0;
}
