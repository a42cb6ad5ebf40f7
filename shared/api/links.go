package api

// Link is one entry of a resource's _links.
type Link struct {
	Href string `json:"href"`
	Type string `json:"type"`
}

// Links maps a link name (self, parent, next, ...) to a Link.
type Links map[string]Link

// JSONLink is a link to an API resource.
func JSONLink(href string) Link { return Link{Href: href, Type: "application/json"} }

// Self returns links holding only self.
func Self(href string) Links { return Links{"self": JSONLink(href)} }
