// The snapshot browser of taxoforge (taxoforge/snapshots/browser.py writes the page and the
// data files it reads; browser_index.py documents their layout). No library, no network
// beyond the files beside this page. Everything from the data is put in the page with
// textContent or as attribute values: names are hostile input.
(function () {
  "use strict";
  var META = JSON.parse(document.getElementById("tf-meta").textContent);
  var F = {};
  META.fields.forEach(function (f, i) { F[f] = i; });
  var WS = new RegExp(META.names.whitespace.replace(/\\x\{([0-9a-f]+)\}/gi, "\\u{$1}"), "gu");
  var cache = new Map();
  var names = null;
  var current = null;
  var searchToken = 0;
  var SCI_KINDS = ["scientific", "synonym", "infrageneric"];
  var $ = function (id) { return document.getElementById(id); };

  // ---- data ---------------------------------------------------------------------------
  function fetchJSON(path) {
    if (!cache.has(path)) {
      cache.set(path, fetch(path).then(function (r) {
        if (!r.ok) { throw new Error(path + ": HTTP " + r.status); }
        return r.arrayBuffer();
      }).then(function (buf) {
        var bytes = new Uint8Array(buf);
        if (bytes.length > 1 && bytes[0] === 0x1f && bytes[1] === 0x8b) {  // gzip, unless the host already undid it
          var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
          return new Response(stream).arrayBuffer().then(function (b) { return new Uint8Array(b); });
        }
        return bytes;
      }).then(function (bytes) { return JSON.parse(new TextDecoder().decode(bytes)); }));
      cache.get(path).catch(function () { cache.delete(path); });
    }
    return cache.get(path);
  }
  function shardOf(o) { return fetchJSON("nodes/" + Math.floor(o / META.shard_size) + ".json.gz"); }
  // [id, label, rank, parent, depth, size, n_children] of ordinal o, read from shard s
  function brief(s, o) {
    if (o >= s.first && o < s.first + s.nodes.length) { return s.nodes[o - s.first]; }
    return s.outside[String(o)];
  }
  function nodeAt(o) {
    return shardOf(o).then(function (s) {
      var rec = s.nodes[o - s.first];
      if (!rec) { throw new Error("no node " + o); }
      var path = [], p = rec[F.parent];
      while (p >= 0) { var b = brief(s, p); path.unshift([p, b]); p = b[F.parent]; }
      var kids = rec[F.children].map(function (c) { return [c, brief(s, c)]; });
      return { o: o, rec: rec, path: path, kids: kids };
    });
  }
  function fnv1a(text) {
    var bytes = new TextEncoder().encode(text), h = 0x811c9dc5;
    for (var i = 0; i < bytes.length; i++) { h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0; }
    return h >>> 0;
  }
  function lookupId(id) {
    var b = fnv1a(id) & (META.id_buckets - 1);
    return fetchJSON("ids/" + b + ".json.gz").then(function (m) {
      return Object.prototype.hasOwnProperty.call(m, id) ? m[id] : undefined;
    });
  }
  function key(text) {
    return String(text || "").normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().replace(WS, " ")
      .replace(/^ +| +$/g, "");
  }
  function chars(text) { return Array.from(text); }

  // ---- links out: from the node's id and its identifier names (META.links) ------------------
  function linksOut(rec) {
    var out = [], seen = new Set();
    var add = function (prefix, value) {
      var t = META.links[prefix];
      if (!t || !new RegExp(t.pattern).test(value)) { return; }
      var href = t.url.replace("{}", encodeURIComponent(value));
      if (seen.has(href)) { return; }
      seen.add(href);
      out.push([t.name, href, prefix + ":" + value]);
    };
    var id = rec[F.id], i = id.indexOf(":");
    if (i > 0) { add(id.slice(0, i), id.slice(i + 1)); }
    rec[F.names].forEach(function (n) {
      var kind = META.kinds[n[1]];
      var prefix = META.id_kinds[kind];
      if (prefix) { add(prefix, String(n[0] === 0 ? rec[F.label] : n[0])); }
    });
    var sci = rec[F.names].filter(function (n) { return META.kinds[n[1]] === "scientific"; })[0];
    if (sci) {
      var sname = String(sci[0] === 0 ? rec[F.label] : sci[0]);
      META.searches.forEach(function (s) {
        out.push([s.name, s.url.replace("{}", encodeURIComponent(sname)), "search by name"]);
      });
    }
    return out;
  }

  // ---- the page -------------------------------------------------------------------------
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { e.textContent = attrs[k]; } else { e.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) { if (c) { e.appendChild(c); } });
    return e;
  }
  function text(t) { return document.createTextNode(String(t)); }
  function rankName(r) { return r >= 0 ? META.ranks[r] : ""; }
  function nodeLink(id, label) {
    return el("a", { href: "#" + encodeURIComponent(id), "class": "node", text: label || id });
  }
  function fmt(n) { return Number(n).toLocaleString("en-US"); }

  function renderNode(v) {
    var rec = v.rec, box = $("node");
    box.textContent = "";
    var crumbs = el("nav", { "class": "path", "aria-label": "path to the root" });
    v.path.forEach(function (p) {
      crumbs.appendChild(nodeLink(p[1][F.id], p[1][F.label]));
      crumbs.appendChild(el("span", { "class": "sep", text: " › " }));
    });
    crumbs.appendChild(el("span", { "class": "here", text: rec[F.label] || rec[F.id] }));
    box.appendChild(crumbs);
    var sciLabel = rec[F.names].some(function (n) { return n[0] === 0 && isScientific(META.kinds[n[1]]); });
    var head = el("h2", {}, [el("span", { "class": sciLabel ? "sci" : "", text: rec[F.label] || rec[F.id] })]);
    if (rec[F.rank] >= 0) { head.appendChild(el("span", { "class": "rank", text: rankName(rec[F.rank]) })); }
    box.appendChild(head);
    box.appendChild(el("p", { "class": "facts" }, [
      el("code", { "class": "id", text: rec[F.id] }),
      text(" · depth " + rec[F.depth] + " · subtree " + fmt(rec[F.size]) + " node" + (rec[F.size] === 1 ? "" : "s")
           + " · " + fmt(rec[F.n_children]) + " child" + (rec[F.n_children] === 1 ? "" : "ren"))]));
    var grid = el("div", { "class": "grid" });
    grid.appendChild(namesBlock(rec));
    grid.appendChild(linksBlock(rec));
    grid.appendChild(diffBlock(rec));
    if (rec[F.links].length) { grid.appendChild(datasetBlock(rec)); }
    box.appendChild(grid);
    box.appendChild(childrenBlock(v));
    document.title = (rec[F.label] || rec[F.id]) + " · " + META.ref;
  }
  function section(title, cls) {
    var s = el("section", { "class": "card " + (cls || "") });
    s.appendChild(el("h3", { text: title }));
    return s;
  }
  function namesBlock(rec) {
    // one line per name, with every kind (and language) it has: "dog — label, lemma · en"
    var s = section("Names", "names"), ul = el("ul"), byName = new Map();
    rec[F.names].forEach(function (n) {
      var name = String(n[0] === 0 ? rec[F.label] : n[0]);
      if (!byName.has(name)) { byName.set(name, { kinds: [], langs: [], sources: [] }); }
      var b = byName.get(name), kind = META.kinds[n[1]] || "?";
      if (b.kinds.indexOf(kind) < 0) { b.kinds.push(kind); }
      if (n[2] && b.langs.indexOf(n[2]) < 0) { b.langs.push(n[2]); }
      if (n[3] && b.sources.indexOf(n[3]) < 0) { b.sources.push(n[3]); }
    });
    // the node's own names first (its label, its scientific name), then the others; a part's name last
    var rank = function (b) { return b.kinds.indexOf("infrageneric") >= 0 ? 2 : b.sources.length ? 1 : 0; };
    Array.from(byName.entries()).sort(function (x, y) { return rank(x[1]) - rank(y[1]); }).forEach(function (kv) {
      var name = kv[0], b = kv[1], sci = b.kinds.some(isScientific);
      ul.appendChild(el("li", {}, [el("span", { "class": "name" + (sci ? " sci" : ""), text: name }),
        el("span", { "class": "muted", text: " " + b.kinds.join(", ") + (b.langs.length ? " · " + b.langs.join(", ") : "")
          + (b.sources.length ? " · from " + b.sources.join(", ") : "") })]));
    });
    if (!byName.size) { ul.appendChild(el("li", { "class": "muted", text: "no names besides its label" })); }
    s.appendChild(ul);
    return s;
  }
  function linksBlock(rec) {
    var s = section("Links out", "out"), ul = el("ul"), links = linksOut(rec);
    links.forEach(function (l) {
      ul.appendChild(el("li", {}, [el("a", { href: l[1], rel: "noopener noreferrer", text: l[0] }),
        el("span", { "class": "muted", text: " " + l[2] })]));
    });
    if (!links.length) { ul.appendChild(el("li", { "class": "muted", text: "no identifier this page can link" })); }
    s.appendChild(ul);
    return s;
  }
  function diffBlock(rec) {
    var d = META.diff, s = section(d ? "Changes since " + d.from : "Changes", "diff"), ul = el("ul"), c = rec[F.diff];
    if (!d) {
      ul.appendChild(el("li", { "class": "muted", text: "the first version of " + META.taxonomy + ": nothing to compare" }));
    } else if (!c || (!c.added && c.old_label === undefined && !c.old_parent && !(c.na || c.nr || c.la || c.lr || c.lc))) {
      ul.appendChild(el("li", { "class": "muted", text: (c && c.below ? "itself unchanged since " : "unchanged since ") + d.from }));
    } else {
      if (c.added) { ul.appendChild(el("li", { "class": "added", text: "new in this version" })); }
      if (c.old_label !== undefined) {
        ul.appendChild(el("li", {}, [text("renamed from "), el("q", { text: c.old_label })]));
      }
      if (c.old_parent) {
        ul.appendChild(el("li", {}, [text("moved from under "), nodeLink(c.old_parent[0], c.old_parent[1] || c.old_parent[0])]));
      }
      (c.na || []).forEach(function (n) { ul.appendChild(el("li", { "class": "added", text: "+ name " + n[0] + " (" + n[1] + ")" })); });
      (c.nr || []).forEach(function (n) { ul.appendChild(el("li", { "class": "removed", text: "− name " + n[0] + " (" + n[1] + ")" })); });
      (c.la || []).forEach(function (l) { ul.appendChild(el("li", { "class": "added", text: "+ label " + l[0] + ":" + l[1] + " " + l[2] })); });
      (c.lr || []).forEach(function (l) { ul.appendChild(el("li", { "class": "removed", text: "− label " + l[0] + ":" + l[1] + " " + l[2] })); });
      (c.lc || []).forEach(function (l) {
        ul.appendChild(el("li", { text: "label " + l[0] + ":" + l[1] + " " + l[2] + " moved here from " + (l[4] || l[3] || "nowhere") }));
      });
    }
    if (c && c.below) {
      ul.appendChild(el("li", { "class": "below", text: fmt(c.below) + " change" + (c.below === 1 ? "" : "s") + " below" }));
    }
    (c && c.kin || []).forEach(function (k) {
      ul.appendChild(el("li", { "class": "added" }, k[2] ? [text("+ child "), nodeLink(k[0], k[1]), text(" moved in from under "),
        nodeLink(k[2], k[3] || k[2])] : [text("+ child "), nodeLink(k[0], k[1]), text(" (new)")]));
    });
    if (c && c.kin_n > (c.kin || []).length) { ul.appendChild(el("li", { "class": "muted", text: "… " + fmt(c.kin_n - c.kin.length) + " more children in" })); }
    (c && c.kout || []).forEach(function (k) {
      ul.appendChild(el("li", { "class": "removed" }, k[2] ? [text("− child "), nodeLink(k[0], k[1]), text(" moved out, now under "),
        nodeLink(k[2], k[3] || k[2])] : [text("− child "), el("span", { text: k[1] || k[0] }), text(" (removed)")]));
    });
    if (c && c.kout_n > (c.kout || []).length) { ul.appendChild(el("li", { "class": "muted", text: "… " + fmt(c.kout_n - c.kout.length) + " more children out" })); }
    if (d && d.page) {
      ul.appendChild(el("li", {}, [el("a", { href: d.page, text: "every change of this version" })]));
    }
    s.appendChild(ul);
    return s;
  }
  function datasetBlock(rec) {
    var s = section("Dataset labels linked here", "datasets"), ul = el("ul");
    rec[F.links].forEach(function (l) {
      ul.appendChild(el("li", {}, [el("code", { text: l[0] + ":" + l[1] }), text(" " + (l[2] || ""))]));
    });
    s.appendChild(ul);
    return s;
  }
  function childRows(tbody, kids) {
    tbody.textContent = "";
    kids.forEach(function (k) {
      tbody.appendChild(el("tr", {}, [el("td", {}, [nodeLink(k.id, k.label)]),
        META.ranks.length ? el("td", { "class": "muted", text: rankName(k.rank) }) : null,
        el("td", { "class": "num", text: fmt(k.size) }), el("td", { "class": "num", text: fmt(k.n) })]));
    });
  }
  function childrenBlock(v) {
    var rec = v.rec, n = rec[F.n_children], s = section(n ? "Children (" + fmt(n) + ")" : "Children", "children");
    if (!n) { s.appendChild(el("p", { "class": "muted", text: "a leaf: no children" })); return s; }
    var kids = v.kids.map(function (k) {
      return { id: k[1][F.id], label: k[1][F.label], rank: k[1][F.rank], size: k[1][F.size], n: k[1][F.n_children] };
    });
    var sort = el("select", { id: "child-sort", "aria-label": "sort children" }, [
      el("option", { value: "name", text: "by name" }), el("option", { value: "size", text: "by subtree size" })]);
    var table = el("table", {}, [el("thead", {}, [el("tr", {}, [el("th", { text: "child" }),
      META.ranks.length ? el("th", { text: "rank" }) : null,
      el("th", { "class": "num", text: "subtree size" }), el("th", { "class": "num", text: "children" })])])]);
    var tbody = el("tbody");
    table.appendChild(tbody);
    var show = function () {
      var list = kids.slice();
      if (sort.value === "size") { list.sort(function (a, b) { return b.size - a.size; }); }
      childRows(tbody, list);
    };
    sort.addEventListener("change", show);
    s.appendChild(el("p", {}, [text("Sort "), sort]));
    s.appendChild(table);
    show();
    if (n > kids.length) {
      var more = el("button", { type: "button", id: "all-children", text: "show all " + fmt(n) + " children" });
      more.addEventListener("click", function () {
        more.disabled = true;
        fetchJSON("children/" + v.o + ".json.gz").then(function (all) {
          kids = all.map(function (c) { return { id: c[1], label: c[2], rank: c[3], size: c[4], n: c[5] }; });
          more.remove();
          show();
        });
      });
      s.appendChild(more);
    }
    return s;
  }

  function open(o) {
    current = o;
    $("status").textContent = "";
    return nodeAt(o).then(function (v) { if (current === o) { renderNode(v); } });
  }
  function openId(id) {
    return lookupId(id).then(function (o) {
      if (typeof o === "number") { return open(o); }
      var box = $("node");
      box.textContent = "";
      if (Array.isArray(o)) {  // in the previous version, removed in this one
        box.appendChild(el("h2", { text: o[0] || id }));
        box.appendChild(el("p", {}, [el("code", { text: id }), text(" was removed in this version; in " + META.diff.from + " it was under "),
          nodeLink(o[1], o[2] || o[1])]));
      } else {
        box.appendChild(el("p", { "class": "muted", text: "no node " + id + " in " + META.ref }));
      }
    });
  }
  function hashText() {  // a malformed address (#%E0%A4%A) is read as written, never thrown: the page still loads
    var raw = location.hash.slice(1);
    try { return decodeURIComponent(raw); } catch (e) { return raw; }
  }
  function route() {
    var h = hashText();
    return h ? openId(h) : open(META.roots[0] || 0);
  }

  // ---- search ---------------------------------------------------------------------------
  function nameIndex() {
    if (!names) { names = fetchJSON("names/index.json.gz"); }
    return names;
  }
  // the higher taxa hits name: fetched with the first search's files, not at load
  function contexts() { return fetchJSON("names/contexts.json.gz"); }
  // equal keys: the whole name before a later word, more common names (a taxon people name), kind,
  // bigger subtree, shorter name (browser_names.py sorts the files the same way)
  function better(q) {
    return function (a, b) {
      return ((a[0] === q ? 0 : 1) - (b[0] === q ? 0 : 1)) || (a[6] - b[6]) || (b[8] - a[8]) || (a[2] - b[2])
        || (b[7] - a[7]) || (a[1].length - b[1].length) || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
    };
  }
  // Damerau-Levenshtein (optimal string alignment) distances from string a to every prefix of string b
  // (by UTF-16 code units, on typed arrays: no allocation per cell): row[j] = distance(a, b[0:j]); null
  // once every distance must exceed max
  var ROWS = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];
  function distances(a, b, max) {
    var n = b.length, i, j;
    if (ROWS[0].length < n + 1) { ROWS = [new Int32Array(n + 1), new Int32Array(n + 1), new Int32Array(n + 1)]; }
    var prev2 = ROWS[0], prev = ROWS[1], cur = ROWS[2];
    for (j = 0; j <= n; j++) { prev[j] = j; }
    for (i = 1; i <= a.length; i++) {
      cur[0] = i;
      var low = i, ai = a.charCodeAt(i - 1);
      for (j = 1; j <= n; j++) {
        var bj = b.charCodeAt(j - 1);
        var v = prev[j - 1] + (ai === bj ? 0 : 1), w = prev[j] + 1;
        if (w < v) { v = w; }
        w = cur[j - 1] + 1;
        if (w < v) { v = w; }
        if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj && prev2[j - 2] + 1 < v) { v = prev2[j - 2] + 1; }
        cur[j] = v;
        if (v < low) { low = v; }
      }
      if (low > max) { return null; }
      var t = prev2; prev2 = prev; prev = cur; cur = t;
    }
    return prev;
  }
  function distance(a, b, max) {
    if (Math.abs(a.length - b.length) > max) { return max + 1; }
    var row = distances(a, b, max);
    return row ? row[b.length] : max + 1;
  }
  // the least distance from a (a bucket's prefix) to any prefix of b: one table, its last row
  function prefixDistance(a, b, max) {
    var row = distances(a, b.slice(0, a.length + max), max);
    if (!row) { return max + 1; }
    var best = max + 1;
    for (var L = Math.max(0, a.length - max); L <= Math.min(b.length, a.length + max); L++) { best = Math.min(best, row[L]); }
    return best;
  }
  // Nearest names of a query nothing starts with (a typo): the buckets whose prefix is within the
  // allowed distance of a prefix of the query (most typos are not in a name's first letters, and
  // the prefix of every bucket is in the name index, so no file is fetched blind; the 3 nearest),
  // then every name in them by its distance to the query
  function suggest(q, idx) {
    var max = q.length <= 4 ? 1 : q.length <= 9 ? 2 : 3, leaves = [];
    Object.keys(idx.leaves).forEach(function (p) {
      var pc = p.replace(/\u0000$/, ""), d = prefixDistance(pc, q, Math.min(max, 1 + (pc.length >> 2)));
      if (d <= max) { leaves.push([d, -pc.length, idx.leaves[p]]); }
    });
    leaves.sort(function (a, b) { return (a[0] - b[0]) || (a[1] - b[1]); });
    var files = [];
    leaves.forEach(function (l) { if (files.length < 3 && files.indexOf(l[2]) < 0) { files.push(l[2]); } });
    return Promise.all(files.map(function (f) { return fetchJSON("names/" + f + ".json.gz"); })).then(function (lists) {
      var scored = [], order = better(q);
      lists.forEach(function (l) {
        l.forEach(function (e) {
          var d = distance(e[0], q, max);
          if (d <= max) { scored.push([d, e]); }
        });
      });
      scored.sort(function (a, b) { return (a[0] - b[0]) || order(a[1], b[1]); });
      var seen = new Set(), out = [];
      for (var i = 0; i < scored.length && out.length < 10; i++) {
        if (!seen.has(scored[i][1][3])) { seen.add(scored[i][1][3]); out.push(scored[i][1]); }
      }
      return out;
    });
  }
  function searchNames(q) {
    return nameIndex().then(function (idx) {
      var files = [];
      if (Object.prototype.hasOwnProperty.call(idx.tops, q)) {
        files.push("names/t" + idx.tops[q] + ".json.gz");
        if (Object.prototype.hasOwnProperty.call(idx.leaves, q + "\u0000")) { files.push("names/" + idx.leaves[q + "\u0000"] + ".json.gz"); }
      } else {
        var c = chars(q);
        for (var L = Math.min(c.length, META.names.max_prefix); L > 0; L--) {
          var p = c.slice(0, L).join("");
          if (Object.prototype.hasOwnProperty.call(idx.leaves, p)) { files.push("names/" + idx.leaves[p] + ".json.gz"); break; }
        }
      }
      return Promise.all([Promise.all(files.map(fetchJSON)), contexts()]).then(function (got) {
        var lists = got[0], hits = [];
        idx.contexts = got[1];
        lists.forEach(function (l) { l.forEach(function (e) { if (e[0].startsWith(q)) { hits.push(e); } }); });
        hits.sort(better(q));
        var seen = new Set(), out = [];
        for (var i = 0; i < hits.length && out.length < 50; i++) {
          if (!seen.has(hits[i][3])) { seen.add(hits[i][3]); out.push(hits[i]); }
        }
        if (out.length) { return { hits: out, total: hits.length, contexts: idx.contexts }; }
        return suggest(q, idx).then(function (near) {
          return { hits: near, total: near.length, contexts: idx.contexts, suggested: true };
        });
      });
    });
  }
  function searchIds(raw) {
    var t = raw.trim();
    if (!t || /\s/.test(t)) { return Promise.resolve([]); }
    var candidates = t.indexOf(":") > 0 ? [t] : META.id_prefixes.map(function (p) { return p + ":" + t; });
    return Promise.all(candidates.map(function (id) {
      return lookupId(id).then(function (o) { return typeof o === "number" ? [id, o] : null; });
    })).then(function (r) { return r.filter(Boolean); });
  }
  // a scientific name (and the label of a ranked node) is set in italics
  function isScientific(kind) { return SCI_KINDS.indexOf(kind) >= 0; }
  function hitLink(e, contexts) {
    var kind = META.kinds[e[2]] || "", ranked = e[5] >= 0;
    var a = el("a", { href: "#ord-" + e[3], "class": "hit", "data-ord": String(e[3]) },
      [el("span", { "class": "name" + (isScientific(kind) || (kind === "label" && ranked) ? " sci" : ""), text: e[1] })]);
    a.appendChild(el("span", { "class": "muted", text: (kind ? " " + kind : "") + (e[4] !== 0 ? " of " : "") }));
    if (e[4] !== 0) { a.appendChild(el("span", { "class": "label" + (ranked ? " sci" : ""), text: e[4] })); }
    if (ranked) { a.appendChild(el("span", { "class": "rank", text: rankName(e[5]) })); }
    var c = contexts && e[9] >= 0 ? contexts[e[9]] : null;
    if (c) {
      a.appendChild(el("span", { "class": "context" }, [text(" in "), el("span", { "class": c[1] >= 0 ? "sci" : "", text: c[0] })]));
    }
    return a;
  }
  function search(raw) {
    var token = ++searchToken, t0 = performance.now(), q = key(raw), list = $("results");
    if (!q) { list.textContent = ""; $("search-status").textContent = ""; return Promise.resolve(); }
    return Promise.all([searchIds(raw), searchNames(q)]).then(function (r) {
      if (token !== searchToken) { return; }
      var ids = r[0], found = r[1];
      list.textContent = "";
      ids.forEach(function (x) {
        var name = el("span", { "class": "name", text: x[0] }), what = el("span", { "class": "muted", text: " node id" });
        var a = el("a", { href: "#" + encodeURIComponent(x[0]), "class": "hit", "data-ord": String(x[1]) }, [name, what]);
        list.appendChild(el("li", {}, [a]));
        shardOf(x[1]).then(function (s) {  // the taxon's name and rank, from its node file, once it is here
          var b = brief(s, x[1]);
          if (!b || !b[F.label]) { return; }
          name.textContent = b[F.label];
          if (b[F.rank] >= 0) { name.className = "name sci"; }
          what.textContent = " node id " + x[0];
          if (b[F.rank] >= 0) { a.appendChild(el("span", { "class": "rank", text: rankName(b[F.rank]) })); }
        });
      });
      if (found.suggested && found.hits.length) {
        list.appendChild(el("li", { "class": "suggest-head", text: "no name starts with \u201c" + raw.trim() + "\u201d; the nearest names:" }));
      }
      found.hits.forEach(function (e) { list.appendChild(el("li", {}, [hitLink(e, found.contexts)])); });
      var n = ids.length + found.hits.length;
      $("search-status").textContent = n ? (found.suggested ? "did you mean one of these?" : found.total > found.hits.length
        ? "best " + found.hits.length + " of " + fmt(found.total) + " names" : n + " found") : "nothing found for " + raw;
      window.__tfSearch = { query: raw, ms: performance.now() - t0, count: n, suggested: !!found.suggested,
        best: ids.length ? ids[0][1] : found.hits.length ? found.hits[0][3] : null };
      document.dispatchEvent(new CustomEvent("tf-searched", { detail: window.__tfSearch }));
    });
  }

  // the two functions the data files were built with (browser_index.name_key, id_bucket), for checks
  window.taxoforgeBrowser = { key: key, fnv1a: fnv1a, meta: META };

  // the search in the address (?q=…): a search can be linked and shared, and reloads keep it
  function keepQuery(raw) {
    var u = new URL(location.href);
    if (raw.trim()) { u.searchParams.set("q", raw); } else { u.searchParams.delete("q"); }
    try { history.replaceState(history.state, "", u.pathname + u.search + u.hash); } catch (e) { /* file: pages */ }
  }
  $("q").addEventListener("input", function (ev) { keepQuery(ev.target.value); search(ev.target.value); });
  var linked = new URLSearchParams(location.search).get("q");
  if (linked) {
    $("q").value = linked;
    search(linked).then(function () {  // a shared search opens its best hit, unless the address names a node
      var best = window.__tfSearch && window.__tfSearch.best;
      if (!location.hash && typeof best === "number") { open(best); }
    });
  }
  $("results").addEventListener("click", function (ev) {
    var a = ev.target.closest("a[data-ord]");
    if (!a) { return; }
    ev.preventDefault();
    var o = Number(a.getAttribute("data-ord"));
    nodeAt(o).then(function (v) { location.hash = "#" + encodeURIComponent(v.rec[F.id]); });
  });
  window.addEventListener("hashchange", function () {
    var h = hashText();
    if (h.indexOf("ord-") === 0) { open(Number(h.slice(4))); } else { route(); }
  });
  route().then(function () {
    document.body.setAttribute("data-ready", "1");
    window.__tfReady = performance.now();
    document.dispatchEvent(new CustomEvent("tf-ready"));
  }, function (e) { $("status").textContent = "could not load this snapshot's browser: " + e.message; });
  nameIndex();
})();
