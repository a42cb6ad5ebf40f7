package policy

import "strings"

// globMatch reports whether s matches pattern p, where '*' in p matches any
// run of bytes (including none) and every other byte matches itself. It
// backtracks to the last star only, so it runs in O(len(p)*len(s)) at worst
// and allocates nothing: it is on the path of every request.
func globMatch(p, s string) bool {
	if p == "*" {
		return true
	}
	if strings.IndexByte(p, '*') < 0 {
		return p == s
	}
	px, sx := 0, 0
	starPx, starSx := -1, 0
	for px < len(p) || sx < len(s) {
		if px < len(p) {
			c := p[px]
			if c == '*' {
				// Try the star matching nothing first; remember where to
				// resume if that turns out wrong.
				starPx, starSx = px, sx+1
				px++
				continue
			}
			if sx < len(s) && s[sx] == c {
				px++
				sx++
				continue
			}
		}
		if starPx >= 0 && starSx <= len(s) {
			// Let the last star swallow one more byte.
			px, sx = starPx+1, starSx
			starSx++
			continue
		}
		return false
	}
	return true
}

// collapseStars replaces every run of '*' by a single '*': "**" means the
// same as "*", and one spelling per meaning keeps canonical strings (and so
// equality checks in Covers) honest.
func collapseStars(s string) string {
	if !strings.Contains(s, "**") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prevStar := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '*' && prevStar {
			continue
		}
		prevStar = c == '*'
		b.WriteByte(c)
	}
	return b.String()
}
