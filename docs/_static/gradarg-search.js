/*
 * Ranked search over Sphinx's own index (searchindex.js), for the site's search page.
 *
 * Sphinx's searchtools.js keeps only the pages that contain every word of a query and gives
 * each page the score of its best word, so a pasted error message with one word no page uses
 * finds nothing and ties sort by title. Here every query word counts:
 *
 *   score(page) = sum over query words w of  weight(best field of the page holding w) * idf(w)
 *
 * with idf(w) = ln(1 + N / pages holding w). Fields, strongest first: the page title, its
 * synonyms (the "search-synonyms" of its front matter), the heading of one of its sections, its
 * other headings, its body text (prose, code and outputs, as Sphinx indexed them); a word
 * found only as the start of a longer indexed word counts a fraction. A page is scored as its
 * best section (the heading field is that section's heading), as an entry of a question page
 * is, so a long page does not gather full heading weight from words spread over many
 * headings; in a section the page's title weighs what another of its headings does (its full
 * weight would lift every section above the entry whose own heading holds the query).
 * Results that tie go to the page whose title holds most of the query, then to the heading
 * the query covers most. An identifier written with
 * underscores counts as itself and as its words in the pages ("retain graph" finds
 * `retain_graph`), and in a query when no page holds it as one word. Words of asking rather
 * than of a topic ("problem", "issue", "help") count as nothing, and "vs" / "versus" as
 * "difference": a comparison is answered under either wording, and a word rare on the site
 * but empty of topic must not outrank the words that name the problem. A query that contains
 * a run of words of an error message a page quotes (searchextra.js, written at build time
 * from the built pages) adds a bonus to that page: pasted messages land on the page that
 * raises them. Each result links to that best section.
 *
 * The question-and-answer pages (searchextra.js "sections") are ranked entry by entry: each
 * entry (a level-2 section: a question as its heading, a short answer and a live cell) is a
 * result of its own, scored by the same sum with its heading weighing most, then its own text,
 * then its page's title; and the messages its outputs quote add their bonus to that entry only.
 *
 * GradargSearch.rank(query) returns the ranked results ([{docname, title, anchor, score}]);
 * the search page shows them through searchtools.js's own display functions.
 */
"use strict";

const GradargSearch = (() => {
  const WEIGHT = {
    title: 6, synonym: 5, heading: 5, otherHeading: 3.5, body: 1.5, partial: 0.5,
    // a page whose sections' own words are known (searchextra.js "pagesections"): a word of
    // the section scored counts as body text, one elsewhere on the page less
    ownText: 1.5, elsewhere: 0.75,
    // a section scored on its own (not the page's top): a word of the page's title or
    // synonyms weighs there as another of the page's headings does, below the section's own
    // heading; the title's full weight would lift every section of the page above the entry
    // whose own heading holds the reader's words
    titleInSection: 3.5,
  };
  // an entry of a question page ranks like a section of a page: its heading (the question)
  // weighs what a section heading does, its own text what body text does; its page title little
  const ENTRY = { heading: 5, body: 1.5, page: 1, partial: 0.5 };
  const PHRASE_BONUS = 3; // per matched word of an error message, times its idf
  const MIN_PHRASE = 4; // words in a row that count as quoting a message
  const MAX_RESULTS = 30;
  // results that match the same words in the same fields tie: the one on the page whose title
  // holds most of the query (the page about it: a bare error message finds the page about that
  // error before an entry of another page that also quotes it), then the one whose heading the
  // query covers most (a heading about just this, not a long one that also mentions it), by
  // these much per share (too little to reorder any other results)
  const FOCUS = 1e-3;
  const FOCUS_PAGE = 2e-3;
  const focus = (stems, headingStems, pageStems) => {
    let hit = 0, onPage = 0;
    for (const s of stems) {
      if (headingStems.has(s)) hit++;
      if (pageStems.has(s)) onPage++;
    }
    return FOCUS * hit / Math.max(1, headingStems.size)
      + FOCUS_PAGE * onPage / Math.max(1, stems.length);
  };

  let prepared = null;

  // words of asking, not of a topic: every question here is about a problem
  const FILLER = new Set([
    "problem", "problems", "issue", "issues", "help", "please", "anyone", "question",
  ]);
  // a comparison ("detach vs no_grad") is asked with any of these stems, and answered under a
  // heading with any other ("what is the difference between ..."): one stem for all of them
  const SAME = new Map([["vs", "differ"], ["versus", "differ"]]);
  // the words Sphinx indexed that count as each stem of SAME ("differ": "vs", "versus")
  const ALSO = new Map();
  for (const [w, s] of SAME) ALSO.set(s, [...(ALSO.get(s) || []), w]);
  const kept = (w) => !stopwords.has(w) && !FILLER.has(w) && !/^\d+$/.test(w);
  // the words of an identifier written with underscores ("retain_graph" -> "retain", "graph"):
  // Sphinx indexes the identifier as one word, and a reader may type it either way
  const parts = (w) =>
    w.includes("_") ? w.split("_").filter((x) => x.length >= 2 && kept(x)) : [];
  const words = (text) => {
    const out = [];
    for (const w of splitQuery(text.toLowerCase()).filter(kept)) out.push(w, ...parts(w));
    return out;
  };

  const postings = (map, term) => {
    if (!Object.prototype.hasOwnProperty.call(map, term)) return [];
    const found = map[term];
    return typeof found === "number" ? [found] : found;
  };

  function prepare(index) {
    const stemmer = new Stemmer();
    const stemCache = new Map();
    const stem = (w) => {
      if (!stemCache.has(w)) {
        const s = stemmer.stemWord(w);
        stemCache.set(w, SAME.get(s) || s);
      }
      return stemCache.get(w);
    };
    const nDocs = index.docnames.length;
    const extra = window.GRADARG_SEARCH_EXTRA || { synonyms: {}, messages: {} };
    const docOf = new Map(index.docnames.map((name, i) => [name, i]));
    // per page: stems of its title, of each heading (with its anchor), of its synonyms
    const titleStems = index.titles.map((t) => new Set(words(t || "").map(stem)));
    const headings = index.docnames.map(() => []);
    for (const [heading, places] of Object.entries(index.alltitles)) {
      const stems = new Set(words(heading).map(stem));
      for (const [doc, anchor] of places)
        if (anchor) headings[doc].push({ heading, anchor, stems });
    }
    const synonymStems = index.docnames.map(() => new Set());
    for (const [docname, list] of Object.entries(extra.synonyms)) {
      if (!docOf.has(docname)) continue;
      for (const phrase of list)
        for (const w of words(phrase)) synonymStems[docOf.get(docname)].add(stem(w));
    }
    // error messages: the sequence of (unstemmed) words, per page
    const messages = [];
    for (const [docname, list] of Object.entries(extra.messages)) {
      if (!docOf.has(docname)) continue;
      for (const text of list)
        messages.push({ doc: docOf.get(docname), words: splitQuery(text.toLowerCase()) });
    }
    // question pages: each entry's stems (heading, text) and the messages it quotes
    const entries = index.docnames.map(() => null);
    for (const [docname, list] of Object.entries(extra.sections || {})) {
      if (!docOf.has(docname)) continue;
      entries[docOf.get(docname)] = list.map((e) => {
        const text = words(e.text).map(stem);
        return {
          anchor: e.anchor,
          heading: e.heading,
          headingStems: new Set(words(e.heading).map(stem)),
          textStems: new Set(text),
          textWords: [...new Set(words(e.text))],
          messages: (e.messages || []).map((m) => splitQuery(m.toLowerCase())),
        };
      });
    }
    // the other pages: each section's own words (up to its first subsection), by anchor
    const ownStems = index.docnames.map(() => null);
    for (const [docname, bySection] of Object.entries(extra.pagesections || {})) {
      if (!docOf.has(docname)) continue;
      const own = new Map();
      for (const [anchor, text] of Object.entries(bySection))
        own.set(anchor, new Set(words(text).map(stem)));
      ownStems[docOf.get(docname)] = own;
    }
    const termKeys = Object.keys(index.terms);
    // pages whose body holds an identifier with underscores, by the stems of its words
    const partPages = new Map();
    for (const key of termKeys)
      for (const x of parts(key)) {
        const s = stem(x);
        if (!partPages.has(s)) partPages.set(s, new Set());
        for (const d of postings(index.terms, key)) partPages.get(s).add(d);
      }
    return {
      index, stem, nDocs, titleStems, headings, synonymStems, messages, termKeys, entries,
      partPages, ownStems,
    };
  }

  // pages holding the stem in each field, as sets of document numbers
  function locate(p, s, raw) {
    const { index } = p;
    const body = new Set([
      ...postings(index.terms, raw), ...postings(index.titleterms, raw),
      ...(p.partPages.get(s) || []),
    ]);
    for (const t of [s, ...(ALSO.get(s) || [])])
      for (const d of [...postings(index.terms, t), ...postings(index.titleterms, t)]) body.add(d);
    const title = new Set(), synonym = new Set(), heading = new Set();
    for (let d = 0; d < p.nDocs; d++) {
      if (p.titleStems[d].has(s)) title.add(d);
      if (p.synonymStems[d].has(s)) synonym.add(d);
      if (p.headings[d].some((h) => h.stems.has(s))) heading.add(d);
      if (p.entries[d] && p.entries[d].some((e) => e.textStems.has(s))) body.add(d);
    }
    // the start of a longer indexed word ("backprop" in "backpropag..."), if nothing else
    const partial = new Set();
    if (s.length >= 4)
      for (const key of p.termKeys)
        if (key !== s && key.startsWith(s))
          for (const d of postings(index.terms, key)) partial.add(d);
    return { title, synonym, heading, body, partial };
  }

  // the bonus for the longest run of query words found in a row inside `message` (0 if none)
  function runBonus(rawWords, message, idfOf) {
    const n = rawWords.length;
    let best = null;
    for (let i = 0; i < n; i++)
      for (let j = 0; j < message.length; j++) {
        let k = 0;
        while (i + k < n && j + k < message.length && rawWords[i + k] === message[j + k]) k++;
        if (k >= MIN_PHRASE && (!best || k > best.length)) best = { start: i, length: k };
      }
    if (!best) return 0;
    let value = 0;
    for (let k = 0; k < best.length; k++) value += idfOf(rawWords[best.start + k]);
    return value * PHRASE_BONUS;
  }

  function phraseBonus(p, rawWords, idfOf) {
    // per page, the best run of query words quoted by one of its messages
    const bonus = new Map();
    for (const m of p.messages) {
      const value = runBonus(rawWords, m.words, idfOf);
      if (value) bonus.set(m.doc, Math.max(bonus.get(m.doc) || 0, value));
    }
    return bonus;
  }

  // the entries of question page d, scored one by one
  function entryResults(p, d, stems, idfByStem, rawAll, idfOf) {
    const { index } = p;
    const out = [];
    for (const e of p.entries[d]) {
      let score = 0;
      for (const s of stems) {
        const idf = idfByStem.get(s);
        if (!idf) continue;
        let w = 0;
        if (e.headingStems.has(s)) w = ENTRY.heading;
        else if (e.textStems.has(s)) w = ENTRY.body;
        else if (p.titleStems[d].has(s) || p.synonymStems[d].has(s)) w = ENTRY.page;
        else if (s.length >= 4 && e.textWords.some((x) => x !== s && x.startsWith(s)))
          w = ENTRY.partial;
        score += w * idf;
      }
      let bonus = 0;
      for (const m of e.messages) bonus = Math.max(bonus, runBonus(rawAll, m, idfOf));
      score += bonus;
      if (score > 0)
        out.push({
          d, score: score + focus(stems, e.headingStems, p.titleStems[d]), anchor: "#" + e.anchor,
          title: `${index.titles[d]} > ${e.heading}`,
        });
    }
    return out;
  }

  function rank(query) {
    const p = prepared;
    const { index } = p;
    // an identifier the pages hold counts as itself; one they do not hold, as its words
    const queryWords = [];
    for (const w of splitQuery(query.toLowerCase()).filter(kept)) {
      queryWords.push(w);
      const held = [p.stem(w), w].some(
        (t) => postings(index.terms, t).length || postings(index.titleterms, t).length,
      );
      if (!held) queryWords.push(...parts(w));
    }
    const stems = [...new Set(queryWords.map(p.stem))];
    const candidates = new Set(); // pages holding a query word (scored below, by section)
    const idfByStem = new Map();
    const found = new Map();
    for (const s of stems) {
      const raw = queryWords.find((w) => p.stem(w) === s) || s;
      const where = locate(p, s, raw);
      const any = new Set([...where.title, ...where.synonym, ...where.heading, ...where.body]);
      const df = any.size || where.partial.size;
      if (!df) continue;
      const idf = Math.log(1 + p.nDocs / df);
      idfByStem.set(s, idf);
      found.set(s, where);
      for (const d of [...any, ...where.partial]) candidates.add(d);
    }
    // a pasted message: its words in a row, unstemmed, against the messages each page quotes
    const rawAll = splitQuery(query.toLowerCase());
    // a word of the query that no page holds counts as the rarest; a stop word ("does",
    // "not", "the") as nothing: a run of them is no sign of a quoted message
    const idfOf = (w) =>
      idfByStem.get(p.stem(w)) || (stopwords.has(w) ? 0 : Math.log(1 + p.nDocs));
    const bonusOf = phraseBonus(p, rawAll, idfOf);
    for (const d of bonusOf.keys()) candidates.add(d);

    const pageResults = [...candidates]
      .filter((d) => !p.entries[d])
      .map((d) => {
        // the page scored as its best section, as an entry is: a word of that section's
        // heading weighs as a heading, a word of another of its headings less (summing the
        // words of all its headings as headings let a long page outrank the entry that answers)
        const own = p.ownStems[d];
        // (with `alone`, h's score as a result of its own: the title weighs titleInSection)
        const sectionScore = (h, alone = false) => {
          let v = bonusOf.get(d) || 0;
          const mine = own && own.get(h ? h.anchor : "");
          for (const s of stems) {
            const where = found.get(s);
            if (!where) continue;
            let w = 0;
            if (alone && h.stems.has(s)) w = WEIGHT.heading;
            else if (where.title.has(d)) w = alone ? WEIGHT.titleInSection : WEIGHT.title;
            else if (where.synonym.has(d)) w = alone ? WEIGHT.titleInSection : WEIGHT.synonym;
            else if (h && h.stems.has(s)) w = WEIGHT.heading;
            else if (mine && mine.has(s)) w = WEIGHT.ownText;
            else if (where.heading.has(d)) w = own ? WEIGHT.elsewhere : WEIGHT.otherHeading;
            else if (where.body.has(d)) w = own ? WEIGHT.elsewhere : WEIGHT.body;
            else if (where.partial.has(d)) w = WEIGHT.partial;
            v += w * idfByStem.get(s);
          }
          return v;
        };
        // the section linked to: the best with the title's weight everywhere (it adds alike to
        // every section); the page's score: its top's, or that section's as a result of its own
        const top = sectionScore(null);
        let anchor = "", heading = "", best = top, chosen = null;
        for (const h of p.headings[d]) {
          const v = sectionScore(h);
          if (v > best + 1e-9) { best = v; chosen = h; }
        }
        if (chosen) { anchor = "#" + chosen.anchor; heading = chosen.heading; }
        const score = (chosen ? Math.max(top, sectionScore(chosen, true)) : top)
          + focus(stems, chosen ? chosen.stems : p.titleStems[d], p.titleStems[d]);
        const title = index.titles[d];
        return {
          d, score, anchor, title: heading && heading !== title ? `${title} > ${heading}` : title,
        };
      });
    const entryResultsAll = [];
    for (const d of candidates)
      if (p.entries[d]) entryResultsAll.push(...entryResults(p, d, stems, idfByStem, rawAll, idfOf));
    const results = [...pageResults, ...entryResultsAll]
      .sort((a, b) => b.score - a.score || a.title.localeCompare(b.title))
      .slice(0, MAX_RESULTS)
      .map((r) => ({
        docname: index.docnames[r.d],
        filename: index.filenames[r.d],
        title: r.title,
        anchor: r.anchor,
        score: Math.round(r.score * 100) / 100,
      }));
    return { results, stems };
  }

  function ready() {
    if (!prepared && Search._index) prepared = prepare(Search._index);
    return prepared !== null;
  }

  /** Ranked results for `query`: [{docname, title, anchor, score}], best first. */
  function search(query) {
    if (!ready()) throw new Error("the search index is not loaded yet");
    return rank(query).results;
  }

  // Show them on the search page with searchtools.js's display functions.
  function query(queryText) {
    ready();
    const { results, stems } = rank(queryText);
    const highlight = new Set(words(queryText));
    // the words the opened page highlights (sphinx_highlight.js), as searchtools.js stores them
    if (typeof SPHINX_HIGHLIGHT_ENABLED !== "undefined" && SPHINX_HIGHLIGHT_ENABLED)
      localStorage.setItem("sphinx_highlight_terms", [...highlight].join(" "));
    const items = results.map((r) => [
      r.docname, r.title, r.anchor, null, r.score, r.filename, SearchResultKind.text,
    ]);
    _removeChildren(document.getElementById("search-progress"));
    // _displayNextItem shows the last item first
    _displayNextItem(items.reverse(), items.length, new Set(stems), highlight);
  }

  if (typeof Search !== "undefined") Search.query = query;
  return { search };
})();
