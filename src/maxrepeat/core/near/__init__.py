"""Near-duplicate matching (opt-in): the config keys (`config`), what a value becomes before
it is fingerprinted (`matching`, with the built-in `normalizers`), the step keys of the pure
path (`steps`) and the bridge to the C extension's near-duplicate tables (`native`)."""
