/* Placeholder entry point until the gateway lands. */
#include <stdio.h>
int main(void)
{
	puts("leasegate: gateway not built yet");
	return 0;
}
