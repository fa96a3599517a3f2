"""AucArena (auction_v0) baselines: the rule bidder and scripted test bidders (:mod:`.rule`)."""
