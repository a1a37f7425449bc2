/* A statically linked program: hotlock-run must refuse it (exit 2), since
 * LD_PRELOAD cannot replace its pthread functions. */
#include <stdio.h>

int main(void)
{
	puts("static program ran");
	return 0;
}
