module arenabot

go 1.19
