// Rank queries with the site's search (docs/_static/gradarg-search.js) over a built site, in
// Node instead of a browser: a quick loop while writing entries and headings.
//
//   node docs/tools/search_node.js docs/_build/html < queries.json > ranked.json
//
// queries.json: a JSON list of strings; prints a JSON list of result lists, each
// [{docname, anchor, title, score}], best first (the first 10).
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const site = process.argv[2];
const read = (f) => fs.readFileSync(path.join(site, f), "utf8");
const context = { window: {}, console, localStorage: { setItem() {} } };
context.window = context;
vm.createContext(context);
vm.runInContext(read("_static/language_data.js"), context);
vm.runInContext(
  "var splitQuery = (query) => query.split(/[^\\p{Letter}\\p{Number}_\\p{Emoji_Presentation}]+/gu)" +
    ".filter((term) => term);" +
    "var Search = { setIndex(i) { this._index = i; } };" +
    "var SearchResultKind = {};",
  context,
);
vm.runInContext(read("searchindex.js"), context);
vm.runInContext(read("_static/searchextra.js"), context);
vm.runInContext(read("_static/gradarg-search.js"), context);
const queries = JSON.parse(fs.readFileSync(0, "utf8"));
const out = queries.map((q) =>
  vm.runInContext(`GradargSearch.search(${JSON.stringify(q)})`, context).slice(0, 10),
);
process.stdout.write(JSON.stringify(out));
