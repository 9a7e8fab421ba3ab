// The dashboard's chart: the price history of the GPU model and range chosen in the form
// (#select), read from the JSON API (api/v1/history) and drawn by uPlot (uPlot.iife.min.js,
// loaded before this file). One line per provider and price type: the cheapest $/GPU-hour of
// each bucket. Scraped text (provider names) reaches the page only as text: uPlot writes series
// labels with textContent, and so does this file. The choice goes into the address (history
// replaceState), so the view can be linked; without JavaScript the form reloads the page.
//
// After each drawing, #chart says what it holds in data attributes (data-gpu, data-range,
// data-series: the labels joined by "|", data-x-min and data-x-max: the x scale in Unix seconds,
// data-points), which the browser tests read.
"use strict";
(function () {
  const chartEl = document.getElementById("chart");
  const form = document.getElementById("select");
  if (!chartEl || !form || typeof uPlot !== "function") {
    return;
  }
  const caption = document.getElementById("chart-caption");
  const status = document.getElementById("chart-status");
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
  const dash = [[], [6, 4], [2, 3], [10, 3, 2, 3]];
  let plot = null;
  let drawn = 0; // the number of the last request made: an older answer is dropped

  form.classList.add("js");

  function chosen() {
    const range = form.querySelector("input[name=range]:checked");
    return { gpu: form.elements.gpu.value, range: range.value, since: range.dataset.since, interval: range.dataset.interval, label: range.dataset.label };
  }

  function size() {
    const width = Math.max(280, chartEl.clientWidth);
    return { width: width, height: Math.round(Math.min(380, Math.max(220, width * 0.45))) };
  }

  function money(v) {
    return v == null ? "–" : "$" + v.toFixed(2);
  }

  // series turns history points into uPlot's columns: the bucket times, then one column of
  // prices per provider and price type (null where it has no price in a bucket).
  function series(points) {
    const times = new Set();
    const lines = new Map();
    for (const p of points) {
      const t = Date.parse(p.bucket) / 1000;
      const key = p.provider + " " + p.price_type;
      times.add(t);
      if (!lines.has(key)) {
        lines.set(key, new Map());
      }
      lines.get(key).set(t, Number(p.min_usd_per_gpu_hour));
    }
    const xs = Array.from(times).sort(function (a, b) { return a - b; });
    const labels = Array.from(lines.keys()).sort();
    const data = [xs];
    for (const label of labels) {
      const line = lines.get(label);
      data.push(xs.map(function (x) { return line.has(x) ? line.get(x) : null; }));
    }
    return { labels: labels, data: data };
  }

  function render(sel, body) {
    const s = series(body.history);
    const from = Date.parse(body.query.since) / 1000;
    const to = Date.parse(body.query.until) / 1000;
    const opts = Object.assign(size(), {
      scales: { x: { time: true, range: function () { return [from, to]; } } },
      series: [{ label: "UTC", value: "{YYYY}-{MM}-{DD} {HH}:{mm}" }].concat(s.labels.map(function (label, i) {
        return { label: label, stroke: palette[i % palette.length], dash: dash[Math.floor(i / palette.length) % dash.length], width: 2, spanGaps: false, value: function (u, v) { return money(v); } };
      })),
      axes: [{}, { size: 64, values: function (u, vals) { return vals.map(money); } }],
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      hooks: {
        // Once drawn, the chart says what it holds, read from uPlot's own state.
        ready: [function (u) {
          chartEl.dataset.gpu = sel.gpu;
          chartEl.dataset.range = sel.range;
          chartEl.dataset.series = s.labels.join("|");
          chartEl.dataset.xMin = String(u.scales.x.min);
          chartEl.dataset.xMax = String(u.scales.x.max);
          chartEl.dataset.points = String(body.history.length);
          chartEl.setAttribute("aria-busy", "false");
        }],
      },
    });
    if (plot) {
      plot.destroy();
    }
    chartEl.textContent = "";
    caption.textContent = sel.gpu + ": the cheapest $/GPU-hour per " + sel.interval + ", by provider and price type, " + sel.label + " (UTC)";
    status.textContent = body.history.length ? "" : "No prices of " + sel.gpu + " were observed in this range.";
    plot = new uPlot(opts, s.data, chartEl);
  }

  function draw() {
    const sel = chosen();
    const mine = ++drawn;
    chartEl.setAttribute("aria-busy", "true");
    status.textContent = "Loading the history of " + sel.gpu + "…";
    const params = new URLSearchParams({ gpu: sel.gpu, since: sel.since, interval: sel.interval });
    fetch("api/v1/history?" + params.toString(), { headers: { Accept: "application/json" } })
      .then(function (resp) {
        return resp.json().then(function (body) {
          if (!resp.ok) {
            throw new Error(body.error || resp.statusText);
          }
          return body;
        });
      })
      .then(function (body) {
        if (mine === drawn) {
          render(sel, body);
        }
      })
      .catch(function (err) {
        if (mine === drawn) {
          status.textContent = "The price history could not be read: " + err.message;
          chartEl.setAttribute("aria-busy", "false");
        }
      });
  }

  function choose() {
    const sel = chosen();
    history.replaceState(null, "", "?" + new URLSearchParams({ gpu: sel.gpu, range: sel.range }).toString());
    draw();
  }

  form.addEventListener("change", choose);
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    choose();
  });
  window.addEventListener("resize", function () {
    if (plot) {
      plot.setSize(size());
    }
  });
  draw();
})();
