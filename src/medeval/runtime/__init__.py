"""Runtime of the compendium: parameters and profiles, notebook execution and caching, grid executor,
provenance and device selection."""
