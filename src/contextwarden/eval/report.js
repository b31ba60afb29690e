// The replay report's charts, made interactive: a read-out of every line at the request under
// the pointer, legend entries that show and hide lines and markers, buttons that switch the
// y scale, and a drag across the plot that zooms into those requests. The charts are drawn
// server-side as SVG (svgchart.py); this reads their JSON and moves what is already drawn.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var TIP_GAP = 14;
  var MIN_DRAG = 6;  // pixels: a shorter drag is a click
  var MIN_SPAN = 2;  // requests shown at the deepest zoom
  var TICKS = 8;
  var STEPS = [1, 2, 5, 10];

  function tickStep(span) {
    var power = Math.pow(10, Math.floor(Math.log10(Math.max(1, span / TICKS))));
    for (var i = 0; i < STEPS.length; i++) {
      if (STEPS[i] * power >= span / TICKS) return Math.max(1, STEPS[i] * power);
    }
    return 10 * power;
  }

  function say(unit, value) {
    if (unit === "usd") {
      return "$" + value.toLocaleString("en-US", {minimumFractionDigits: 4, maximumFractionDigits: 4}) + " so far";
    }
    if (unit === "percent") {
      return value.toLocaleString("en-US", {maximumFractionDigits: 1}) + "% of probes present";
    }
    return Math.round(value).toLocaleString("en-US") + " tokens";
  }

  function share(view, value) {
    if (view.log) {
      var floor = Math.log10(view.low);
      var spot = value > 0 ? Math.log10(value) : floor;
      return (spot - floor) / (Math.log10(view.high) - floor);
    }
    return (value - view.low) / (view.high - view.low);
  }

  function element(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function setup(figure) {
    var data = JSON.parse(figure.querySelector("script.chart-data").textContent);
    var svg = figure.querySelector("svg.plot");
    var tip = figure.querySelector(".tip");
    var hover = svg.querySelector("g.hover");
    var cross = hover.querySelector("line.cross");
    var left = data.plot[0], top = data.plot[1], right = data.plot[2], bottom = data.plot[3];
    var state = {view: 0, off: {}, from: 0, to: Math.max(1, data.last), drag: null};
    var brush = svg.querySelector("rect.brush");
    var unzoom = figure.querySelector("button.unzoom");
    var ticks = svg.querySelector("g.x-ticks");
    var dots = data.lines.map(function (line) {
      var dot = document.createElementNS(SVG, "circle");
      dot.setAttribute("r", "4.5");
      dot.setAttribute("fill", line.colour);
      dot.setAttribute("stroke", "#fff");
      dot.setAttribute("stroke-width", "1.5");
      hover.appendChild(dot);
      return dot;
    });
    figure.querySelectorAll(".legend .key").forEach(function (key) {
      if (key.getAttribute("aria-pressed") === "false") state.off[key.dataset.series] = true;
    });

    function hidden(name, group) {
      return Boolean(state.off[name] || (group && state.off[group]));
    }

    function apply() {
      svg.querySelectorAll("g.view").forEach(function (view) {
        if (Number(view.dataset.view) === state.view) view.removeAttribute("display");
        else view.setAttribute("display", "none");
      });
      svg.querySelectorAll("g.view [data-series]").forEach(function (item) {
        if (hidden(item.dataset.series, item.dataset.group)) item.setAttribute("display", "none");
        else item.removeAttribute("display");
      });
      figure.querySelectorAll(".legend .key").forEach(function (key) {
        key.setAttribute("aria-pressed", String(!state.off[key.dataset.series]));
      });
      figure.querySelectorAll(".views button").forEach(function (button) {
        button.setAttribute("aria-pressed", String(Number(button.dataset.view) === state.view));
      });
    }

    function x(request) {
      return left + (right - left) * (request - state.from) / (state.to - state.from);
    }

    function requestAt(px) {
      return state.from + (px - left) / (right - left) * (state.to - state.from);
    }

    function zoom(from, to) {
      state.from = from;
      state.to = to;
      // Lines are scaled along x (their strokes keep their width); markers are moved.
      var scale = Math.max(1, data.last) / (to - from);
      var shift = left - scale * (left + (right - left) * from / Math.max(1, data.last));
      var whole = from === 0 && to === Math.max(1, data.last);
      svg.querySelectorAll("g.zoom").forEach(function (group) {
        if (whole) group.removeAttribute("transform");
        else group.setAttribute("transform", "translate(" + shift + " 0) scale(" + scale + " 1)");
      });
      svg.querySelectorAll("g.marks use").forEach(function (use) {
        if (use.dataset.x === undefined) use.dataset.x = use.getAttribute("x");
        use.setAttribute("x", String(shift + scale * Number(use.dataset.x)));
      });
      drawTicks();
      unzoom.hidden = whole;
    }

    function drawTicks() {
      var step = tickStep(state.to - state.from);
      var parts = [];
      for (var r = Math.ceil(state.from / step) * step; r <= state.to; r += step) {
        var line = document.createElementNS(SVG, "line");
        line.setAttribute("x1", String(x(r)));
        line.setAttribute("x2", String(x(r)));
        line.setAttribute("y1", String(top));
        line.setAttribute("y2", String(bottom));
        line.setAttribute("stroke", "#e6e6e6");
        var label = document.createElementNS(SVG, "text");
        label.setAttribute("x", String(x(r)));
        label.setAttribute("y", String(bottom + 17));
        label.setAttribute("text-anchor", "middle");
        label.textContent = r.toLocaleString("en-US");
        parts.push(line, label);
      }
      ticks.replaceChildren.apply(ticks, parts);
    }

    function plotPoint(event) {
      var point = svg.createSVGPoint();
      point.x = event.clientX;
      point.y = event.clientY;
      return point.matrixTransform(svg.getScreenCTM().inverse());
    }

    function inside(at) {
      return at.x >= left && at.x <= right && at.y >= top && at.y <= bottom;
    }

    function y(value) {
      var s = Math.min(1, Math.max(0, share(data.views[state.view], value)));
      return bottom - (bottom - top) * s;
    }

    function readOut(request) {
      tip.replaceChildren(element("div", "tip-head", "request " + request.toLocaleString("en-US")));
      data.lines.forEach(function (line, i) {
        var shown = !hidden(line.name) && request < line.ys.length;
        dots[i].setAttribute("display", shown ? "inline" : "none");
        if (!shown) return;
        var value = line.ys[request];
        dots[i].setAttribute("cx", String(x(request)));
        dots[i].setAttribute("cy", String(y(value)));
        var row = element("div", "tip-row");
        var swatch = element("span", "swatch");
        swatch.style.background = line.colour;
        row.append(swatch, element("span", "tip-name", line.name), element("span", "tip-value", say(data.unit, value)));
        tip.appendChild(row);
      });
      data.marks.forEach(function (marks) {
        if (hidden(marks.name, marks.group)) return;
        var at = marks.xs.indexOf(request);
        if (at >= 0) tip.appendChild(element("div", "tip-mark", marks.texts[at]));
      });
    }

    function place(event) {
      var box = figure.getBoundingClientRect();
      var across = event.clientX - box.left + TIP_GAP;
      if (across + tip.offsetWidth > box.width) across = event.clientX - box.left - TIP_GAP - tip.offsetWidth;
      tip.style.left = Math.max(0, across) + "px";
      tip.style.top = (event.clientY - box.top + TIP_GAP) + "px";
    }

    function leave() {
      hover.setAttribute("display", "none");
      tip.hidden = true;
    }

    svg.addEventListener("pointermove", function (event) {
      var at = plotPoint(event);
      if (state.drag !== null) {
        var end = Math.min(right, Math.max(left, at.x));
        brush.setAttribute("x", String(Math.min(state.drag, end)));
        brush.setAttribute("width", String(Math.abs(end - state.drag)));
        brush.removeAttribute("display");
        return;
      }
      if (!inside(at)) return leave();
      var request = Math.round(requestAt(at.x));
      cross.setAttribute("x1", String(x(request)));
      cross.setAttribute("x2", String(x(request)));
      hover.removeAttribute("display");
      readOut(request);
      tip.hidden = false;
      place(event);
    });
    svg.addEventListener("pointerdown", function (event) {
      var at = plotPoint(event);
      if (event.button !== 0 || !inside(at)) return;
      state.drag = at.x;
      leave();
      event.preventDefault();
    });
    svg.addEventListener("pointerup", function (event) {
      if (state.drag === null) return;
      var start = state.drag, end = Math.min(right, Math.max(left, plotPoint(event).x));
      state.drag = null;
      brush.setAttribute("display", "none");
      if (Math.abs(end - start) < MIN_DRAG) return;
      var from = Math.floor(requestAt(Math.min(start, end)));
      var to = Math.ceil(requestAt(Math.max(start, end)));
      if (to - from < MIN_SPAN) to = from + MIN_SPAN;
      zoom(Math.max(0, from), Math.min(Math.max(1, data.last), to));
    });
    svg.addEventListener("dblclick", function () {
      zoom(0, Math.max(1, data.last));
    });
    unzoom.addEventListener("click", function () {
      zoom(0, Math.max(1, data.last));
    });
    svg.addEventListener("pointerleave", leave);

    figure.querySelectorAll(".legend .key").forEach(function (key) {
      key.addEventListener("click", function () {
        state.off[key.dataset.series] = !state.off[key.dataset.series];
        apply();
      });
    });
    figure.querySelectorAll(".views button").forEach(function (button) {
      button.addEventListener("click", function () {
        state.view = Number(button.dataset.view);
        apply();
      });
    });
    apply();
  }

  document.querySelectorAll("figure.chart").forEach(setup);
  document.documentElement.setAttribute("data-charts", "ready");
})();
