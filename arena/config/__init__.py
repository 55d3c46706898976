"""What an organiser writes: tournament and league files, bot folders (bot.toml), taking a
bot folder in safely, the field of bots, and what a resume compares."""
