"""The random bot: a uniformly random legal action (any game). The baseline to beat."""

import arena_bot


def decide(observation, legal_actions, ctx):
    """Any legal action, from the referee-seeded random source."""
    return ctx.rng.randrange(len(legal_actions))


if __name__ == "__main__":
    arena_bot.run(decide, name="random", version="1.0")
