// ECMAScript's Canonicalize (ignoreCase without the u flag) as this Node computes it:
// every BMP code unit whose canonical unit is another, as JSON [[unit, canonical]...]
// (src/maxrepeat/core/toolmatch/_es_casetable.py holds these as runs).
"use strict";
const out = [];
for (let u = 0; u <= 0xffff; u++) {
  const upper = String.fromCharCode(u).toUpperCase();
  if (upper.length !== 1) continue;
  const c = upper.charCodeAt(0);
  if (c !== u && !(u >= 128 && c < 128)) out.push([u, c]);
}
process.stdout.write(JSON.stringify({ unicode: process.versions.unicode, pairs: out }));
