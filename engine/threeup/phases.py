"""The phases of a 3UP 3DOWN game (`ThreeUpState.phase`): shared by the state, which moves
through them, and the view, which shows what each phase lets a seat see."""

SETUP, PLAY, REFILL, SWAP, OVER = "setup", "play", "refill", "swap", "over"
