"""Results to ratings: the TrueSkill free-for-all, the ledger and standings, how sure the
standings are (confidence), and the SPRT test of one version against another."""
