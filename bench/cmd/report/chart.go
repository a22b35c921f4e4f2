package main

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// A section's chart is a grid of panels, one per scenario that ran at
// more than one goroutine count, each with a line of ns/op against
// goroutine count per implementation. It is written as SVG, or as PNG
// with -format png.

// charted returns the tables a chart shows: those with more than one
// goroutine count.
func charted(tabs []*table) []*table {
	var out []*table
	for _, t := range tabs {
		if len(t.gs) > 1 {
			out = append(out, t)
		}
	}
	return out
}

// render writes the chart of tabs to file; a section with no table to
// chart writes nothing. A panic in the plotting library comes back as an
// error naming the chart.
func render(r *results, s section, tabs []*table, file string) (err error) {
	tabs = charted(tabs)
	if len(tabs) == 0 {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("chart %s: %v", file, p)
		}
	}()
	var impls []string
	for _, t := range tabs {
		for _, im := range t.impls {
			if !slices.Contains(impls, im) {
				impls = append(impls, im)
			}
		}
	}
	cols := max(s.cols, 1)
	rows := (len(tabs) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, t := range tabs {
		p, err := panel(r, t, impls)
		if err != nil {
			return fmt.Errorf("chart %s: %w", file, err)
		}
		grid[i/cols][i%cols] = p
	}
	w, h := vg.Length(cols)*7*vg.Inch, vg.Length(rows)*5*vg.Inch
	var img interface {
		vg.CanvasSizer
		io.WriterTo
	} = vgsvg.New(w, h)
	if filepath.Ext(file) == ".png" {
		img = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	}
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Inch / 4, PadY: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align(grid, tiles, dc)
	for j := range grid {
		for i, p := range grid[j] {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := img.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// palette has a distinct color for each of a dozen implementations.
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, color.RGBA{0xbc, 0xbd, 0x22, 0xff},
	color.RGBA{0x17, 0xbe, 0xcf, 0xff}, color.RGBA{0x00, 0x00, 0x00, 0xff}, color.RGBA{0x00, 0x00, 0x80, 0xff},
}

// ours reports whether impl names one of cellrate's own types.
func ours(impl string) bool {
	return strings.HasPrefix(impl, "cellrate-") || strings.HasPrefix(impl, "atomic128-")
}

// panel plots one scenario; impls fixes each implementation's color and
// marker across panels.
func panel(r *results, t *table, impls []string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = t.scenario
	p.X.Label.Text = "goroutines"
	p.Y.Label.Text = "ns/op (median)"
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, g := range t.gs {
		if g < 1 { // parse refuses these; a log axis cannot show them
			return nil, fmt.Errorf("scenario %s: goroutine count %d is not positive", t.scenario, g)
		}
		ticks = append(ticks, plot.Tick{Value: float64(g), Label: fmt.Sprint(g)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	top := 0.0
	for _, impl := range t.impls {
		var pts plotter.XYs
		for k, g := range t.gs {
			if s := r.stat(t.name[key{impl, g}]); s.ok {
				pts = append(pts, plotter.XY{X: ticks[k].Value, Y: s.median})
				top = max(top, s.median)
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		i := slices.Index(impls, impl)
		c := palette[i%len(palette)]
		line.Color, points.Color = c, c
		points.Shape = plotutil.Shape(i)
		// cellrate's own types solid, the others dashed, the baseline bold.
		line.Width = vg.Points(1)
		if ours(impl) || impl == t.baseline {
			line.Width = vg.Points(2)
		}
		if !ours(impl) {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(impl, line, points)
	}
	p.Y.Max = 1.7 * top // room for the legend above the lines
	return p, nil
}
