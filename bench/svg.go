package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// renderSVG draws the results as panels of horizontal bars, one bar per
// system: jobs/s per workload, server CPU per job, and the steady
// workload's latency. Each bar is the median; the whisker spans min–max.

var systemColor = map[string]string{
	sysNative:       "#1d4ed8",
	sysNativeSingle: "#7c3aed",
	sysLua:          "#60a5fa",
	sysAsynq:        "#d97706",
	sysAsynq10:      "#fbbf24",
	sysBullMQ:       "#dc2626",
	sysFloor:        "#6b7280",
	sysFloorGrouped: "#9ca3af",
}

const (
	svgWidth = 960
	svgBarX  = 200
	svgBarW  = 580
	svgBarH  = 14
	svgGap   = 5
)

type svgCanvas struct {
	b strings.Builder
	y int
}

func (c *svgCanvas) text(x, y int, size int, weight, anchor, s string) {
	fmt.Fprintf(&c.b, `<text x="%d" y="%d" font-size="%d" font-weight="%s" text-anchor="%s">%s</text>`+"\n",
		x, y, size, weight, anchor, html.EscapeString(s))
}

type svgBar struct {
	system string
	agg    Agg
}

// panel draws one titled group of bars with a common linear scale, or a
// logarithmic one (for latencies spanning microseconds to seconds).
func (c *svgCanvas) panel(title string, bars []svgBar, format func(float64) string, logScale bool) {
	c.y += 20
	if logScale {
		title += " (log scale)"
	}
	c.text(10, c.y, 13, "bold", "start", title)
	c.y += 8
	top, low := 0.0, math.Inf(1)
	for _, bar := range bars {
		top = max(top, bar.agg.Max, bar.agg.Med)
		if bar.agg.N > 0 && bar.agg.Min > 0 {
			low = min(low, bar.agg.Min)
		}
	}
	// The log scale starts a factor of 4 below the smallest value, so the
	// smallest bar is still visible.
	low /= 4
	for _, bar := range bars {
		mid := c.y + svgBarH/2
		c.text(svgBarX-8, mid+4, 11, "normal", "end", displayName[bar.system])
		if bar.agg.N == 0 || top <= 0 {
			c.text(svgBarX+4, mid+4, 11, "normal", "start", "not measured")
			c.y += svgBarH + svgGap
			continue
		}
		scale := func(v float64) int { return int(v / top * svgBarW) }
		if logScale && top > low && low > 0 {
			scale = func(v float64) int {
				if v <= low {
					return 0
				}
				return int(math.Log(v/low) / math.Log(top/low) * svgBarW)
			}
		}
		w := max(scale(bar.agg.Med), 1)
		fmt.Fprintf(&c.b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", svgBarX, c.y, w, svgBarH, systemColor[bar.system])
		if bar.agg.N > 1 {
			x0, x1 := svgBarX+scale(bar.agg.Min), svgBarX+scale(bar.agg.Max)
			fmt.Fprintf(&c.b, `<path d="M%d %dH%dM%d %dV%dM%d %dV%d" stroke="#111" stroke-width="1" fill="none"/>`+"\n",
				x0, mid, x1, x0, mid-4, mid+4, x1, mid-4, mid+4)
		}
		label := format(bar.agg.Med)
		if bar.agg.N > 1 {
			label += "  (" + format(bar.agg.Min) + "–" + format(bar.agg.Max) + ")"
		}
		c.text(svgBarX+max(w, scale(bar.agg.Max))+6, mid+4, 11, "normal", "start", label)
		c.y += svgBarH + svgGap
	}
}

func renderSVG(r *Results) []byte {
	c := &svgCanvas{}
	c.y = 24
	c.text(10, c.y, 16, "bold", "start", "trafikey benchmarks: median of "+fmt.Sprint(r.Cfg.Rounds)+" round(s), whiskers min–max")
	c.y += 8
	// Legend.
	x := 10
	c.y += 14
	for _, s := range r.Systems {
		if w := 30 + 8*len(displayName[s]); x > 10 && x+w > svgWidth {
			x, c.y = 10, c.y+18 // the legend goes on in a new line
		}
		fmt.Fprintf(&c.b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", x, c.y-10, systemColor[s])
		c.text(x+16, c.y, 12, "normal", "start", displayName[s])
		x += 30 + 8*len(displayName[s])
	}
	if r.Cfg.Smoke || r.Cfg.Trial {
		c.y += 18
		c.text(10, c.y, 12, "bold", "start", "Trial run: reduced sizes, not the full benchmark. Command:")
		cmd := r.Cfg.Command
		if len(cmd) > 140 {
			cmd = cmd[:137] + "..."
		}
		c.y += 15
		c.text(10, c.y, 11, "normal", "start", cmd)
	}
	bars := func(workload string, pick func(*Cell) Agg) []svgBar {
		var out []svgBar
		for _, s := range r.Systems {
			if cell := r.cell(s, workload); cell.Runs > 0 { // variants run only some workloads
				out = append(out, svgBar{s, pick(cell)})
			}
		}
		return out
	}
	rate := func(v float64) string { return fmtRate(v) + "/s" }
	for _, w := range r.Workloads {
		c.panel("jobs/s — "+w.Title, bars(w.ID, func(c *Cell) Agg { return c.Rate }), rate, false)
	}
	for _, w := range r.Workloads {
		c.panel("server CPU µs per job — "+w.ID, bars(w.ID, func(c *Cell) Agg { return c.ServerUS }), fmtF, false)
	}
	for _, w := range r.Workloads {
		if w.Kind != "steady" {
			continue
		}
		c.panel(fmt.Sprintf("add→complete latency p50 at a steady %d jobs/s", w.Rate), bars(w.ID, func(c *Cell) Agg { return c.P50 }), fmtUS, true)
		c.panel(fmt.Sprintf("add→complete latency p99 at a steady %d jobs/s", w.Rate), bars(w.ID, func(c *Cell) Agg { return c.P99 }), fmtUS, true)
	}
	if r.hasWorkload("add") {
		c.panel("Valkey memory per pending job beyond the payload, bytes", bars("add", func(c *Cell) Agg { return c.MemPerJob }),
			func(v float64) string { return fmt.Sprintf("%.0f B", v) }, false)
	}
	c.y += 16
	var out strings.Builder
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n",
		svgWidth, c.y, svgWidth, c.y)
	fmt.Fprintf(&out, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	out.WriteString(c.b.String())
	out.WriteString("</svg>\n")
	return []byte(out.String())
}
