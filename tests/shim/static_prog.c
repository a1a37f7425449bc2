/* SPDX-License-Identifier: MIT */
/* A statically linked program, built twice: static (ET_EXEC) and static-PIE
 * (ET_DYN), neither with a PT_INTERP.  hotlock-run must refuse both (exit
 * 2), since LD_PRELOAD cannot replace their pthread functions. */
#include <stdio.h>

int main(void)
{
	puts("static program ran");
	return 0;
}
