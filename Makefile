# Regenerate asm/asm_amd64.s with the avo program in gen/ (its own module).
generate:
	go -C gen run . -out ../asm/asm_amd64.s

# Regenerate and fail if the committed assembly differs from what gen writes.
generate-check: generate
	git diff --exit-code -- asm/

.PHONY: generate generate-check
