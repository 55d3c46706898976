"""The static HTML site: what the pages say, the replays' frames, and the writer."""
