package httpkit

// FormLogoPath is the public path of a form's logo: the version (a digest of the image) is
// part of it, so a new logo has a new URL and the old one can be cached for ever.
func FormLogoPath(formID, version string) string {
	return "/f/" + formID + "/logo/" + version
}

// FormThemePath is the public path of a form's theme stylesheet for a theme digest.
func FormThemePath(formID, version string) string {
	return "/f/" + formID + "/theme.css?v=" + version
}
