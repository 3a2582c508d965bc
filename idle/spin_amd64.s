#include "textflag.h"

// func spinHint()
TEXT ·spinHint(SB), NOSPLIT|NOFRAME, $0-0
	PAUSE
	RET
