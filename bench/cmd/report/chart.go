package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// A chart answers one question: horizontal bars, one per comparison,
// sorted, of the ratio to the baseline on a log axis (or of ns added, on
// a linear one), each with its 95% interval as a whisker and its value
// written beside it; panels share the axis. It is drawn 800 px wide.
type chart struct {
	file, title string
	kind        kind
	axis        string // the x axis's label
	panels      []panel
	readme      bool // shown in the README's figures
}

type panel struct {
	title string
	bars  []bar
}

type bar struct {
	label          string
	center, lo, hi float64
}

// charts returns the report's charts from res (those whose groups ran).
func charts(res results) []chart {
	mk := func(file, title, axis string, k kind, readme bool, ids []string, titles []string, g int) (chart, bool) {
		c := chart{file: file + ".png", title: title, axis: axis, kind: k, readme: readme}
		for i, id := range ids {
			gr, ok := res.find(id, g)
			if !ok {
				continue
			}
			p := panel{title: titles[i]}
			for _, r := range sorted(gr) {
				e, _ := estimate(gr.Kind, r)
				p.bars = append(p.bars, bar{r.Label, e.Center, e.Lo, e.Hi})
			}
			c.panels = append(c.panels, p)
		}
		return c, len(c.panels) > 0
	}
	var out []chart
	add := func(c chart, ok bool) {
		if ok {
			out = append(out, c)
		}
	}
	lim := []string{"limiters/admit", "limiters/deny"}
	limT := []string{"admitting (nearly every call admitted)", "denying (nearly every call denied)"}
	add(mk("limiters", "How many times faster than golang.org/x/time/rate? One goroutine, each limiter's own clock",
		"times faster than x/time/rate (log scale; 1 = as fast; whisker: 95% interval; grey: no difference shown)", speedup, true, lim, limT, 1))
	if p := res.Machine.GOMAXPROCS; p > 1 {
		add(mk("limiters-contended", fmt.Sprintf("The same on %d goroutines at once, one per CPU (contention)", p),
			"times faster than x/time/rate (log scale; 1 = as fast; whisker: 95% interval; grey: no difference shown)", speedup, false, lim, limT, p))
	}
	var kid, kt []string
	for _, n := range res.Config.KeyCounts {
		kid = append(kid, fmt.Sprintf("keyed/%d", n))
		kt = append(kt, fmt.Sprintf("%s keys, one drawn at random per decision", thousands(n)))
	}
	add(mk("keyed", "How many times faster is cellrate's keyed than each per-key limiter? One goroutine",
		"times faster than the peer (log scale; 1 = as fast; whisker: 95% interval; grey: no difference shown)", speedup, true, kid, kt, 1))
	add(mk("stores", "How many times faster is each cellrate store than the store it replaces? One goroutine",
		"times faster than the shipped store (log scale; 1 = as fast; whisker: 95% interval; grey: no difference shown)", speedup, false,
		[]string{"stores"}, []string{"1,000 keys, one drawn at random per decision, admitting"}, 1))
	add(mk("http-added", "How many ns does each middleware add to a request? In process, one goroutine",
		"ns added per request over the bare handler (log scale; whisker: 95% interval; grey: none shown)", added, true,
		[]string{"http/10/added", "http/100000/added"},
		[]string{"10 clients: nearly every request denied (the 429 path)", "100,000 clients: nearly every request admitted"}, 1))
	add(mk("http", "How many times faster is cellrate's httplimit than each middleware? In process, one goroutine",
		"times faster than the peer (log scale; 1 = as fast; whisker: 95% interval; grey: no difference shown)", speedup, false,
		[]string{"http/10", "http/100000"},
		[]string{"10 clients: nearly every request denied (the 429 path)", "100,000 clients: nearly every request admitted"}, 1))
	return out
}

const dpi = 96

// png draws the chart, 800 px wide.
func (c chart) png() (b []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	const titleH = 0.45 * vg.Inch
	width := vg.Length(800) / dpi * vg.Inch
	const captionH = 0.3 * vg.Inch
	height := titleH + 0.3*vg.Inch + captionH // the x axis's tick labels and its caption
	for _, p := range c.panels {
		height += vg.Length(len(p.bars))*0.3*vg.Inch + 0.45*vg.Inch
	}
	img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	ts := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 13), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
	ts.Font.Variant = "Sans"
	dc.FillText(ts, vg.Point{X: width / 2, Y: height - 0.12*vg.Inch}, c.title)

	lo, hi, cutLo, cutHi := c.span()
	plots := make([]*plot.Plot, len(c.panels))
	heights := make([]vg.Length, len(c.panels))
	for i, p := range c.panels {
		plots[i] = c.plot(p, lo, hi, cutLo, cutHi, i == len(c.panels)-1)
		heights[i] = vg.Length(len(p.bars))*0.3*vg.Inch + 0.45*vg.Inch
		if i == len(c.panels)-1 {
			heights[i] += 0.3 * vg.Inch
		}
	}
	// Panels stacked from the top, their y axes aligned: the widest
	// label set decides every panel's left edge.
	var left vg.Length
	for _, p := range plots {
		left = max(left, p.Y.Tick.Label.Width(longest(p)))
	}
	top := height - titleH
	for i, p := range plots {
		area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: dc.Min.X, Y: top - heights[i]}, Max: vg.Point{X: dc.Max.X - 0.15*vg.Inch, Y: top}}}
		pad := left - p.Y.Tick.Label.Width(longest(p)) + 0.12*vg.Inch // the labels' own measure falls a little short
		area.Min.X += pad
		p.Draw(area)
		top -= heights[i]
	}
	// The axis caption, drawn here rather than as the last panel's axis
	// label, which would narrow that panel alone.
	cs := ts
	cs.Font = font.From(plot.DefaultFont, 11)
	cs.YAlign = draw.YBottom
	dc.FillText(cs, vg.Point{X: width / 2, Y: 0.08 * vg.Inch}, c.axis)
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// longest returns p's longest y tick label.
func longest(p *plot.Plot) string {
	var l string
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if len(t.Label) > len(l) {
			l = t.Label
		}
	}
	return l
}

// span returns the x range every panel shows: the values, 1 (or 0),
// the whiskers up to a factor of 2 past the values (a wilder interval is
// cut at the edge, and its label says where it ends), and room on the
// right for the labels.
func (c chart) span() (lo, hi, cutLo, cutHi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	wlo, whi := math.Inf(1), math.Inf(-1)
	for _, p := range c.panels {
		for _, b := range p.bars {
			if !math.IsInf(b.center, 0) && !math.IsNaN(b.center) {
				lo, hi = min(lo, b.center), max(hi, b.center)
			}
			if !math.IsInf(b.lo, 0) && !math.IsInf(b.hi, 0) {
				wlo, whi = min(wlo, b.lo), max(whi, b.hi)
			}
		}
	}
	if lo > hi { // nothing finite
		lo, hi = 1, 1
	}
	if c.kind == added && c.logAdded() {
		lo, hi = max(wlo, lo/1.5), min(max(hi, whi), 1.5*hi)
		return lo / 1.3, hi * math.Pow(hi/lo, 0.75) * 1.1, lo, hi
	}
	if c.kind == added {
		lo, hi = min(lo, 0), max(hi, 1)
		lo, hi = max(min(lo, wlo), lo-hi), min(max(hi, whi), 1.3*hi)
		return lo - 0.02*(hi-lo), hi + 0.6*(hi-lo), lo, hi
	}
	lo, hi = min(lo, 1), max(hi, 1)
	lo, hi = max(min(lo, wlo), lo/1.5), min(max(hi, whi), 1.5*hi)
	return lo / 1.15, hi * math.Pow(hi/lo, 0.45) * 1.1, lo, hi
}

func (c chart) plot(p panel, lo, hi, cutLo, cutHi float64, last bool) *plot.Plot {
	pl := plot.New()
	pl.Title.Text = p.title
	pl.Title.TextStyle.Font.Size = 11
	pl.X.Min, pl.X.Max = lo, hi
	switch {
	case c.kind == speedup:
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = ratioTicks{1.3 * cutHi}
	case c.logAdded():
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = nsLogTicks{1.3 * cutHi}
	default:
		pl.X.Tick.Marker = nsTicks{}
	}
	if !last {
		// Tick labels drawn in white: the same room as the last panel's (so that
		// the panels line up) and only that one labels the axis.
		pl.X.Tick.Label.Color = color.White
	}
	// NominalY puts the first name at the bottom: the fastest goes on top.
	names := make([]string, len(p.bars))
	for i, b := range p.bars {
		names[len(p.bars)-1-i] = b.label
	}
	pl.NominalY(names...)
	pl.Y.Tick.Label.Font.Size = 11
	pl.Add(plotter.NewGrid())
	pl.Add(bars{p.bars, c.kind, cutLo, cutHi, c.logAdded()})
	pl.X.Min, pl.X.Max = lo, hi // every panel the same axis (Add widened it)
	return pl
}

// bars draws a panel's bars from the reference (1, or 0) to each value,
// the interval's whisker and the value in words.
type bars struct {
	b      []bar
	k      kind
	lo, hi float64 // where whiskers are cut
	// logAdded: ns added on a log axis, the bars starting at its left end.
	logAdded bool
}

var (
	fasterColor = color.RGBA{R: 0x3b, G: 0x75, B: 0xaf, A: 0xff}
	slowerColor = color.RGBA{R: 0xc0, G: 0x4e, B: 0x3c, A: 0xff}
	unclear     = color.RGBA{R: 0xa0, G: 0xa0, B: 0xa0, A: 0xff}
)

func (bs bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ref := 1.0
	switch {
	case bs.logAdded:
		ref = p.X.Min
	case bs.k == added:
		ref = 0
	}
	half := 0.1 * vg.Inch
	ts := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 10), Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YCenter}
	clamp := func(v float64) float64 { return min(max(v, bs.lo, p.X.Min), bs.hi) }
	for i, b := range bs.b {
		y := trY(float64(len(bs.b) - 1 - i))
		col := fasterColor
		e := interval{b.lo, b.hi}
		switch {
		case bs.k == speedup && !e.Excludes(1), bs.k == added && !e.Excludes(0):
			col = unclear
		case bs.k == speedup && b.center < 1, bs.k == added && b.center < 0:
			col = slowerColor
		}
		x0, x1 := trX(clamp(ref)), trX(clamp(b.center))
		if bs.logAdded {
			x0 = c.Min.X
		}
		c.SetColor(col)
		c.Fill(vg.Rectangle{Min: vg.Point{X: min(x0, x1), Y: y - half}, Max: vg.Point{X: max(x0, x1), Y: y + half}}.Path())
		ls := draw.LineStyle{Color: color.Black, Width: vg.Points(1.2)}
		wl, wh := trX(clamp(b.lo)), trX(clamp(b.hi))
		c.StrokeLine2(ls, wl, y, wh, y)
		c.StrokeLine2(ls, wl, y-half/2, wl, y+half/2)
		c.StrokeLine2(ls, wh, y-half/2, wh, y+half/2)
		label := ratio(b.center) + "x"
		if bs.k == added {
			label = ns(b.center) + " ns"
		}
		if b.hi > bs.hi || b.lo < bs.lo {
			if bs.k == added {
				label += " (interval " + ns(b.lo) + " to " + ns(b.hi) + ")"
			} else {
				label += " (interval " + ratio(b.lo) + "-" + ratio(b.hi) + ")"
			}
		}
		if math.IsInf(b.hi, 0) {
			label += " (no interval: too few rounds)"
		}
		c.FillText(ts, vg.Point{X: max(wh, x0, x1) + 0.06*vg.Inch, Y: y}, label)
	}
	if !bs.logAdded {
		c.StrokeLine2(draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}, trX(clamp(ref)), c.Min.Y, trX(clamp(ref)), c.Max.Y)
	}
}

func (bs bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, b := range bs.b {
		xmin, xmax = min(xmin, b.center), max(xmax, b.center)
	}
	return xmin, xmax, -0.5, float64(len(bs.b)) - 0.5
}

// ratioTicks marks powers of two (and halves between them on a narrow
// range) labelled "0.5x", "1x", "2x".
type ratioTicks struct{ last float64 }

func (r ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	hi = min(hi, r.last) // none over the labels' room: a label at the edge shrinks the panel
	// Powers of 2, or of 4 or 16 on a wide range, so that at most about
	// eight labels share the axis; halves between them on a narrow one.
	step := 1.0
	for math.Log2(hi/lo)/step > 8 {
		step *= 2
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log2(lo)/step) * step; e <= math.Ceil(math.Log2(hi)); e += step {
		vs := []float64{math.Pow(2, e)}
		if hi/lo < 6 {
			vs = append(vs, 1.5*math.Pow(2, e))
		}
		for _, v := range vs {
			if v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 3, 64) + "x"})
			}
		}
	}
	return ts
}

// logAdded reports whether the chart draws ns added on a log axis:
// when every value is positive, so that a few slow peers do not flatten
// the rest.
func (c chart) logAdded() bool {
	if c.kind != added {
		return false
	}
	for _, p := range c.panels {
		for _, b := range p.bars {
			if !(b.center > 0) {
				return false
			}
		}
	}
	return true
}

// nsLogTicks mark the powers of ten, and 2 and 5 times them on a
// narrow range, up to last.
type nsLogTicks struct{ last float64 }

func (r nsLogTicks) Ticks(lo, hi float64) []plot.Tick {
	hi = min(hi, r.last)
	ms := []float64{1, 2, 5}
	if hi/lo > 50 {
		ms = []float64{1, 3}
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range ms {
			if v := m * math.Pow(10, e); v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
			}
		}
	}
	return ts
}

// nsTicks are plot's default ticks labelled as whole ns.
type nsTicks struct{}

func (nsTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// interval is a whisker's ends.
type interval struct{ lo, hi float64 }

func (i interval) Excludes(v float64) bool { return i.lo > v || i.hi < v }
