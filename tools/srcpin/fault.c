/* the test hook that stops srcpin at a named step, as a kill at that instant would */
#include "fault.h"
#include "srcpin.h"

void
fault(const char *step)
{
	fault_at("SRCPIN_FAULT_AFTER", step);
}
