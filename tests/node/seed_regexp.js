// How the seed framework compiles a `tools` pattern: a leading inline flags group of i, m,
// s (each once) becomes RegExp flags, as it does with "(?i)"; the rest is the source of
// `new RegExp(source, flags)`. Shared by the differential test and the campaigns.
"use strict";

function seedRegExp(pattern) {
  let flags = "";
  let source = pattern;
  const m = /^\(\?([ims]+)\)/.exec(pattern);
  if (m && new Set(m[1]).size === m[1].length) {
    flags = m[1];
    source = pattern.slice(m[0].length);
  }
  return new RegExp(source, flags);
}

module.exports = { seedRegExp };
