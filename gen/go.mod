module github.com/cellrate/cellrate/gen

go 1.25.0

require github.com/mmcloughlin/avo v0.6.0

require (
	golang.org/x/mod v0.37.0 // indirect
	golang.org/x/sync v0.21.0 // indirect
	golang.org/x/tools v0.47.0 // indirect
)

// gen never imports the main module, but its module path lies inside the main
// module's: the requirement lets the go command see that the main module does
// not also provide gen, and the replacement keeps that check local.
replace github.com/cellrate/cellrate => ../
