/* kvtrace report: swimlanes drawn as SVG from the JSON beside each chart.
 * No dependencies, no network. Evidence strings only ever reach the DOM through textContent
 * and setAttribute, never as markup. */
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var LABEL_W = 260, LANE_H = 26, GROUP_H = 20, AXIS_H = 40, PAD_R = 14, MIN_TICK_PX = 95;
  var STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5,
    5e5, 1e6, 2e6, 5e6, 1e7, 15e6, 3e7, 6e7, 12e7, 3e8, 6e8, 9e8, 18e8, 36e8, 108e8, 216e8,
    432e8, 864e8];
  var MARKS = { violation: "\u2717", unverifiable: "?", explained: "\u2713" };

  function svg(name, attrs, parent) {
    var node = document.createElementNS(SVGNS, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (parent) { parent.appendChild(node); }
    return node;
  }

  function html(tag, cls, content, parent) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (content !== undefined && content !== null) { node.textContent = String(content); }
    if (parent) { parent.appendChild(node); }
    return node;
  }

  // A lane's name cut with an ellipsis so it ends before the plot (its full key is the title).
  function fitText(node, text, room) {
    node.textContent = text;
    if (!node.getComputedTextLength || node.getComputedTextLength() <= room) { return; }
    var keep = text.length;
    while (keep > 1 && node.getComputedTextLength() > room) {
      keep -= 1;
      node.textContent = text.slice(0, keep) + "\u2026";
    }
  }

  function pad(n, width) { var s = String(n); while (s.length < width) { s = "0" + s; } return s; }

  function clock(us, step) {
    var iso = new Date(Math.floor(us / 1000)).toISOString();
    var text = iso.slice(11, 19);
    if (step < 1e3) { return text + "." + pad(((us % 1e6) + 1e6) % 1e6, 6); }
    if (step < 1e6) { return text + "." + iso.slice(20, 23); }
    return step >= 864e8 ? iso.slice(0, 10) : text;
  }

  function stamp(us) { return new Date(Math.floor(us / 1000)).toISOString().slice(0, 19).replace("T", " "); }

  function human(us) {
    var s = Math.round(us / 1e6), d = Math.floor(s / 86400), hh = Math.floor(s % 86400 / 3600);
    var m = Math.floor(s % 3600 / 60);
    if (d) { return d + "d" + hh + "h"; }
    if (hh) { return hh + "h" + m + "m"; }
    return m ? m + "m" + (s % 60) + "s" : (s % 60) + "s";
  }

  function Chart(root, data) {
    this.root = root;
    this.data = data;
    this.id = root.id;
    this.byRow = {};
    this.lanes = {};
    this.selected = [];
    var self = this;
    data.marks.forEach(function (m) { self.byRow[m.row] = m; });
    this.build();
    this.fit();
  }

  Chart.prototype.build = function () {
    var bar = html("div", "toolbar", null, this.root);
    this.button(bar, "Fit", "fit all", this.fit);
    this.button(bar, "+", "zoom in", function () { this.zoom(0.5); });
    this.button(bar, "\u2212", "zoom out", function () { this.zoom(2); });
    this.button(bar, "\u2190", "pan left", function () { this.pan(-0.3); });
    this.button(bar, "\u2192", "pan right", function () { this.pan(0.3); });
    html("span", "hint", "wheel: zoom \u00b7 drag: pan \u00b7 click a mark: details", bar);
    this.legend(bar);
    this.svg = svg("svg", { "class": "lanes", role: "img" }, this.root);
    svg("title", {}, this.svg).textContent = "timeline of " + this.data.title;
    this.defs();
    this.layoutLanes();
    this.tip = html("div", "tip", null, this.root);
    this.details = html("div", "details", "Click a mark or bar to see its evidence.", this.root);
    this.drawStatic();
    this.bindView();
  };

  Chart.prototype.button = function (bar, label, title, action) {
    var b = html("button", null, label, bar);
    var self = this;
    b.type = "button";
    b.title = title;
    b.addEventListener("click", function () { action.call(self); });
  };

  Chart.prototype.legend = function (bar) {
    var box = html("span", "legend", null, bar);
    [["lg-violation", "violation"], ["lg-unverifiable", "unverifiable"],
     ["lg-epoch", "leader epoch"], ["lg-uncertain", "1 s uncertainty"], ["lg-flow", "action \u2192 effect"]]
      .forEach(function (pair) { html("span", "swatch " + pair[0], pair[1], box); });
  };

  Chart.prototype.defs = function () {
    var defs = svg("defs", {}, this.svg);
    var hatch = svg("pattern", { id: this.id + "-hatch", width: 6, height: 6,
      patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
    svg("rect", { width: 6, height: 6, "class": "hatch-bg" }, hatch);
    svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, "class": "hatch-line" }, hatch);
    var arrow = svg("marker", { id: this.id + "-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, defs);
    svg("path", { d: "M0,0 L10,5 L0,10 z", "class": "arrowhead" }, arrow);
    this.clip = svg("clipPath", { id: this.id + "-clip" }, defs);
    this.clipRect = svg("rect", { x: LABEL_W, y: 0, height: 10 }, this.clip);
  };

  Chart.prototype.layoutLanes = function () {
    var y = AXIS_H, group = null, self = this;
    this.groups = [];
    this.data.lanes.forEach(function (lane) {
      if (lane.group !== group) { group = lane.group; self.groups.push({ name: group, y: y }); y += GROUP_H; }
      self.lanes[lane.key] = { y: y, lane: lane };
      y += LANE_H;
    });
    this.height = y + 8;
    this.svg.setAttribute("height", this.height);
    this.clipRect.setAttribute("height", this.height);
  };

  Chart.prototype.drawStatic = function () {
    var self = this, labels = svg("g", { "class": "labels" }, this.svg);
    this.groupBands = this.groups.map(function (g) {
      var band = svg("rect", { x: 0, y: g.y, height: GROUP_H, "class": "group-band" }, labels);
      svg("text", { x: 6, y: g.y + 14, "class": "group-label" }, labels).textContent = g.name;
      return band;
    });
    this.laneBands = Object.keys(this.lanes).map(function (key, i) {
      var info = self.lanes[key];
      var band = svg("rect", { x: 0, y: info.y, height: LANE_H, "class": "lane-band " + (i % 2 ? "odd" : "even") }, labels);
      var label = svg("text", { x: 14, y: info.y + 17, "class": "lane-label" }, labels);
      fitText(label, info.lane.label, LABEL_W - 22);
      svg("title", {}, label).textContent = info.lane.key;
      return band;
    });
    this.plot = svg("g", { "class": "plot", "clip-path": "url(#" + this.id + "-clip)" }, this.svg);
    this.axisLayer = svg("g", { "class": "axis" }, this.plot);
    this.spanLayer = svg("g", { "class": "spans" }, this.plot);
    this.guideLayer = svg("g", { "class": "guides" }, this.plot);
    this.flowLayer = svg("g", { "class": "flows" }, this.plot);
    this.markLayer = svg("g", { "class": "marks" }, this.plot);
    this.spanNodes = this.data.spans.map(function (s) { return self.drawSpan(s); });
    this.markNodes = this.data.marks.map(function (m) { return self.drawMark(m); });
    this.flowNodes = this.data.flows.map(function (f) {
      return svg("path", { "class": "flow", "marker-end": "url(#" + self.id + "-arrow)",
        "data-from": f.from, "data-to": f.to }, self.flowLayer);
    });
  };

  Chart.prototype.drawSpan = function (s) {
    var g = svg("g", { "class": "span kind-" + s.kind + " name-" + s.name.replace(/[^A-Za-z]/g, "") +
      (s.status ? " status-" + s.status : "") + (s.open ? " open" : ""), "data-row": s.row || "" }, this.spanLayer);
    var nodes = { g: g, s: s, bar: svg("rect", { "class": "bar" }, g) };
    if (s.xu > s.x0 && s.kind !== "epoch") {
      nodes.unc = svg("rect", { "class": "uncertain", fill: "url(#" + this.id + "-hatch)" }, g);
    }
    nodes.label = svg("text", { "class": "span-label" }, g);
    nodes.label.textContent = s.name;
    this.bindItem(g, s.row, s);
    return nodes;
  };

  Chart.prototype.drawMark = function (m) {
    var g = svg("g", { "class": "mark cat-" + m.category + (m.status ? " status-" + m.status : "") +
      (m.coarse ? " coarse" : ""), "data-row": m.row, "data-rules": m.rules.join(" ") }, this.markLayer);
    var nodes = { g: g, m: m };
    if (m.coarse) { nodes.band = svg("rect", { "class": "band", height: 12 }, g); }
    nodes.dot = svg("circle", { r: m.status === "violation" ? 6 : 4, "class": "dot" }, g);
    if (m.status === "violation") { nodes.guide = svg("line", { "class": "guide" }, this.guideLayer); }
    this.bindItem(g, m.row, null);
    return nodes;
  };

  Chart.prototype.bindItem = function (node, row, span) {
    var self = this;
    node.addEventListener("mouseenter", function (e) { self.showTip(e, row, span); });
    node.addEventListener("mousemove", function (e) { self.moveTip(e); });
    node.addEventListener("mouseleave", function () { self.tip.style.display = "none"; });
    node.addEventListener("click", function (e) { e.stopPropagation(); self.select([row]); self.showDetails(row, span); });
  };

  // The default view is the shown rows' extent, however short the incident: a sub-second
  // burst fills the chart instead of a few pixels of a padded, folded axis.
  Chart.prototype.fit = function () {
    var e = this.data.extent || { x0: 0, x1: this.data.axis.width };
    var margin = Math.max((e.x1 - e.x0) * 0.04, 20);
    this.view = [e.x0 - margin, e.x1 + margin];
    this.layout();
  };

  Chart.prototype.zoom = function (factor, centre) {
    var v = this.view, c = centre === undefined ? (v[0] + v[1]) / 2 : centre;
    var span = Math.max((v[1] - v[0]) * factor, 50);
    var left = (c - v[0]) / (v[1] - v[0]);
    this.view = [c - span * left, c + span * (1 - left)];
    this.layout();
  };

  Chart.prototype.pan = function (share) {
    var d = (this.view[1] - this.view[0]) * share;
    this.view = [this.view[0] + d, this.view[1] + d];
    this.layout();
  };

  Chart.prototype.px = function (x) {
    return LABEL_W + (x - this.view[0]) * this.scale;
  };

  Chart.prototype.bindView = function () {
    var self = this, drag = null;
    this.svg.addEventListener("wheel", function (e) {
      var box = self.svg.getBoundingClientRect(), x = e.clientX - box.left;
      if (x < LABEL_W) { return; }
      e.preventDefault();
      self.zoom(e.deltaY > 0 ? 1.25 : 0.8, self.view[0] + (x - LABEL_W) / self.scale);
    }, { passive: false });
    this.svg.addEventListener("mousedown", function (e) { drag = { x: e.clientX, view: self.view.slice() }; });
    window.addEventListener("mousemove", function (e) {
      if (!drag) { return; }
      var d = (e.clientX - drag.x) / self.scale;
      self.view = [drag.view[0] - d, drag.view[1] - d];
      self.layout();
    });
    window.addEventListener("mouseup", function () { drag = null; });
  };

  Chart.prototype.layout = function () {
    var width = Math.max(this.root.clientWidth || 0, 700), plotW = width - LABEL_W - PAD_R, self = this;
    this.width = width;
    this.scale = plotW / (this.view[1] - this.view[0]);
    this.svg.setAttribute("width", width);
    this.svg.setAttribute("viewBox", "0 0 " + width + " " + this.height);
    this.clipRect.setAttribute("width", plotW + PAD_R);
    this.groupBands.concat(this.laneBands).forEach(function (b) { b.setAttribute("width", width); });
    this.drawAxis(plotW);
    this.spanNodes.forEach(function (n) { self.placeSpan(n); });
    this.markNodes.forEach(function (n) { self.placeMark(n); });
    this.flowNodes.forEach(function (p) { self.placeFlow(p); });
    this.declutter();
    this.root.setAttribute("data-view", Math.round(this.view[0]) + " " + Math.round(this.view[1]));
  };

  Chart.prototype.selfCheck = function () {
    this.root.setAttribute("data-label-overlaps", String(overlaps(visibleBoxes(this.svg, this.width))));
  };

  // Labels in the order they win a place: the segment's date, the fold, the spans, the ticks.
  var LABEL_CLASSES = ["segment-label", "break-label", "span-label", "tick-label"];

  function labelBox(node) {
    var b = node.getBBox();
    return { x0: b.x, x1: b.x + b.width, y0: b.y, y1: b.y + b.height };
  }

  function meets(a, b) { return a.x0 < b.x1 + 3 && b.x0 < a.x1 + 3 && a.y0 < b.y1 && b.y0 < a.y1; }

  // No label is drawn over another: one that would touch a label already placed is hidden.
  Chart.prototype.declutter = function () {
    var placed = [], left = LABEL_W, right = this.width, svgNode = this.svg;
    LABEL_CLASSES.forEach(function (cls) {
      Array.prototype.forEach.call(svgNode.getElementsByClassName(cls), function (node) {
        if (node.style.display === "none") { return; }
        var box = labelBox(node);
        if (box.x1 <= left || box.x0 >= right || !box.x1) { return; }  // clipped away
        if (placed.some(function (other) { return meets(box, other); })) {
          node.style.display = "none";
        } else {
          placed.push(box);
        }
      });
    });
  };

  // The visible part of each shown label: a plot label clipped to the plot, a lane's whole.
  function visibleBoxes(svgNode, right) {
    var out = [];
    LABEL_CLASSES.concat(["lane-label"]).forEach(function (cls) {
      Array.prototype.forEach.call(svgNode.getElementsByClassName(cls), function (node) {
        if (node.style.display === "none") { return; }
        var box = labelBox(node);
        if (cls !== "lane-label") { box.x0 = Math.max(box.x0, LABEL_W); box.x1 = Math.min(box.x1, right); }
        if (box.x1 > box.x0) { out.push(box); }
      });
    });
    return out;
  }

  // A check the page makes of itself (and the browser test reads): shown labels that overlap,
  // counted from their boxes, independently of how declutter chose.
  function overlaps(boxes) {
    var found = 0;
    boxes.forEach(function (a, i) {
      boxes.slice(i + 1).forEach(function (b) {
        if (a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) { found += 1; }
      });
    });
    return found;
  }

  Chart.prototype.laneY = function (key) { var l = this.lanes[key]; return l ? l.y : -100; };

  Chart.prototype.placeSpan = function (n) {
    var s = n.s, y = this.laneY(s.lane), epoch = s.kind === "epoch";
    var x0 = this.px(s.x0), x1 = Math.max(this.px(s.x1), x0 + 2);
    var top = epoch ? y + 1 : y + 5, h = epoch ? LANE_H - 2 : LANE_H - 10;
    setBox(n.bar, x0, top, x1 - x0, h);
    if (n.unc) { setBox(n.unc, x0, top, Math.max(this.px(s.xu) - x0, 2), h); }
    var lx = Math.max(x0, LABEL_W) + 4;
    n.label.setAttribute("x", lx);
    n.label.setAttribute("y", y + 17);
    n.label.style.display = "";  // measured, then shown only inside its own bar
    n.label.style.display = x1 - lx - 2 >= n.label.getComputedTextLength() ? "" : "none";
  };

  Chart.prototype.placeMark = function (n) {
    var m = n.m, y = this.laneY(m.lane) + LANE_H / 2, x0 = this.px(m.x0);
    if (n.band) { setBox(n.band, x0, y - 6, Math.max(this.px(m.x1) - x0, 3), 12); }
    n.dot.setAttribute("cx", x0);
    n.dot.setAttribute("cy", y);
    if (n.guide) {
      n.guide.setAttribute("x1", x0); n.guide.setAttribute("x2", x0);
      n.guide.setAttribute("y1", AXIS_H); n.guide.setAttribute("y2", this.height);
    }
  };

  Chart.prototype.placeFlow = function (p) {
    var a = this.byRow[p.getAttribute("data-from")], b = this.byRow[p.getAttribute("data-to")];
    if (!a || !b) { return; }
    var x0 = this.px(a.x0), y0 = this.laneY(a.lane) + LANE_H / 2;
    var x1 = this.px(b.x0), y1 = this.laneY(b.lane) + LANE_H / 2, bend = (y1 - y0) / 2;
    p.setAttribute("d", "M" + x0 + "," + y0 + " C" + x0 + "," + (y0 + bend) + " " + x1 + "," +
      (y1 - bend) + " " + x1 + "," + y1);
  };

  function setBox(node, x, y, w, h) {
    node.setAttribute("x", x); node.setAttribute("y", y);
    node.setAttribute("width", Math.max(w, 0)); node.setAttribute("height", h);
  }

  Chart.prototype.drawAxis = function (plotW) {
    var layer = this.axisLayer, self = this, segs = this.data.axis.segments;
    while (layer.firstChild) { layer.removeChild(layer.firstChild); }
    var step = STEPS.filter(function (s) { return s * self.scale >= MIN_TICK_PX; })[0] || STEPS[STEPS.length - 1];
    segs.forEach(function (seg, i) {
      self.drawSegment(layer, seg, step);
      var next = segs[i + 1];
      if (next) { self.drawBreak(layer, seg.x + seg.end - seg.start, next.x, next.start - seg.end); }
    });
    svg("line", { x1: LABEL_W, x2: LABEL_W + plotW, y1: AXIS_H - 1, y2: AXIS_H - 1, "class": "axis-line" }, layer);
  };

  Chart.prototype.drawSegment = function (layer, seg, step) {
    var origin = this.data.originUs, left = Math.max(this.view[0], seg.x);
    var right = Math.min(this.view[1], seg.x + seg.end - seg.start);
    if (right <= left) { return; }
    var t0 = origin + seg.start + (left - seg.x), t1 = origin + seg.start + (right - seg.x);
    if (this.px(right) - this.px(left) > 170) {
      svg("text", { x: this.px(left) + 3, y: 12, "class": "segment-label" }, layer).textContent = stamp(t0) + " UTC";
    }
    for (var t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      var x = this.px(seg.x + t - origin - seg.start);
      svg("line", { x1: x, x2: x, y1: AXIS_H - 6, y2: this.height, "class": "tick" }, layer);
      svg("text", { x: x + 2, y: AXIS_H - 9, "class": "tick-label" }, layer).textContent = clock(t, step);
    }
  };

  Chart.prototype.drawBreak = function (layer, x0, x1, gapUs) {
    var a = this.px(x0), b = this.px(x1);
    if (b < LABEL_W || a > this.width) { return; }
    var g = svg("g", { "class": "break" }, layer);
    svg("rect", { x: a, y: AXIS_H, width: Math.max(b - a, 1), height: this.height - AXIS_H, fill: "url(#" + this.id + "-hatch)" }, g);
    var label = svg("text", { x: (a + b) / 2, y: AXIS_H + 14, "class": "break-label" }, g);
    label.textContent = "\u22ef " + human(gapUs) + " \u22ef";
    svg("title", {}, g).textContent = "no evidence for " + human(gapUs) + ": time axis folded";
  };

  Chart.prototype.showTip = function (e, row, span) {
    var r = this.data.rows[row - 1];
    if (!r) { return; }
    var tip = this.tip;
    while (tip.firstChild) { tip.removeChild(tip.firstChild); }
    html("div", "tip-head", (span ? span.kind + " " + span.name + " \u00b7 " : "") + "#" + row + " " + (r.time || "?"), tip);
    html("div", "tip-what", r.what, tip);
    html("div", "tip-ev", r.source + " \u00b7 " + r.evidence, tip);
    r.verdicts.filter(function (v) { return v.status !== "explained"; }).forEach(function (v) {
      html("div", "tip-verdict status-" + v.status, MARKS[v.status] + " " + v.rule + ": " + v.why, tip);
    });
    tip.style.display = "block";
    this.moveTip(e);
  };

  Chart.prototype.moveTip = function (e) {
    var box = this.root.getBoundingClientRect();
    this.tip.style.left = Math.min(e.clientX - box.left + 14, box.width - 380) + "px";
    this.tip.style.top = (e.clientY - box.top + 14) + "px";
  };

  Chart.prototype.showDetails = function (row, span) {
    var r = this.data.rows[row - 1], d = this.details, rules = this.data.rules;
    while (d.firstChild) { d.removeChild(d.firstChild); }
    if (!r) { return; }
    var head = html("div", "det-head", null, d);
    var link = html("a", null, "#" + row, head);
    link.href = "#" + this.id + "-row-" + row;
    html("span", null, " " + (r.time || "?") + (r.orderUncertain ? " (order uncertain)" : "") +
      " \u00b7 " + r.source + " \u00b7 " + r.category + (span ? " \u00b7 starts " + span.kind + " " + span.name : ""), head);
    html("pre", "det-what", r.what, d);
    var facts = [["evidence", r.evidence], ["source position", r.pos], ["level", r.level],
      ["reason", r.reason], ["message", r.messageID], ["VMI", r.vmiUID], ["time resolution", r.resolution]];
    var dl = html("dl", null, null, d);
    facts.forEach(function (f) {
      if (f[1]) { html("dt", null, f[0], dl); html("dd", null, f[1], dl); }
    });
    r.verdicts.forEach(function (v) {
      var box = html("div", "det-verdict status-" + v.status, null, d);
      html("div", null, MARKS[v.status] + " " + v.rule + " (" + v.severity + ", " + v.status + "): " + v.why, box);
      var rule = rules[v.rule];
      if (rule) { html("div", "det-rule", rule.sentence + " \u2014 " + rule.positions.join(", "), box); }
    });
  };

  Chart.prototype.select = function (rows) {
    var self = this;
    this.selected.forEach(function (g) { g.classList.remove("selected"); });
    this.selected = [];
    this.markNodes.concat(this.spanNodes).forEach(function (n) {
      var row = n.m ? n.m.row : n.s.row;
      if (rows.indexOf(row) >= 0) { n.g.classList.add("selected"); self.selected.push(n.g); }
    });
  };

  Chart.prototype.focusRows = function (rows, scroll) {
    var xs = [], self = this;
    rows.forEach(function (r) { var m = self.byRow[r]; if (m) { xs.push(m.x0, m.x1); } });
    this.select(rows);
    if (rows.length) { this.showDetails(rows[0], null); }
    if (!xs.length) { return; }
    var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs), margin = Math.max((hi - lo) * 0.4, 2e6);
    this.view = [lo - margin, hi + margin];
    this.layout();
    if (scroll) { this.root.scrollIntoView({ block: "nearest" }); }
  };

  function start() {
    var charts = {};
    Array.prototype.forEach.call(document.querySelectorAll("[data-kvtrace-chart]"), function (root) {
      var source = document.getElementById(root.id + "-data");
      if (!source) { return; }
      root.textContent = "";
      charts[root.id] = new Chart(root, JSON.parse(source.textContent));
    });
    var focusing = false;
    Array.prototype.forEach.call(document.querySelectorAll("button.show[data-chart]"), function (b) {
      b.addEventListener("click", function () {
        var chart = charts[b.getAttribute("data-chart")];
        if (chart) { chart.focusRows(b.getAttribute("data-rows").split(" ").map(Number), !focusing); }
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) {
      d.addEventListener("toggle", function () { relayout(charts); });
    });
    window.addEventListener("resize", function () { relayout(charts); });
    if (/^#focus/.test(window.location.hash)) {  // open zoomed on the first finding
      var first = document.querySelector("button.show[data-chart]");
      focusing = true;
      if (first) { first.click(); }
      focusing = false;
    }
    Object.keys(charts).forEach(function (k) { charts[k].selfCheck(); });
    document.documentElement.setAttribute("data-kvtrace-charts", String(Object.keys(charts).length));
    document.documentElement.setAttribute("data-kvtrace-ready", "1");
  }

  function relayout(charts) { Object.keys(charts).forEach(function (k) { charts[k].layout(); }); }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
}());
