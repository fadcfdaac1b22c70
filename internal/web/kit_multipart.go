package web

import (
	"errors"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
)

// maxUploadBody bounds a multipart console form (a CSV import of SPEC's
// 5,000 subscribers with attributes fits with room to spare).
const maxUploadBody = 8 << 20

// isMultipart reports whether r's body is a multipart/form-data form (a
// file upload).
func isMultipart(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}

// parseMultipart reads a file-upload form, at most maxUploadBody bytes,
// in memory: its fields (the csrf token among them) land in PostForm like
// an ordinary form's, so the pipeline's CSRF check reads them alike.
func parseMultipart(x *Ctx) error {
	x.R.Body = http.MaxBytesReader(x.W, x.R.Body, maxUploadBody)
	if err := x.R.ParseMultipartForm(maxUploadBody); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return notify.Invalid("The form could not be read")
	}
	return nil
}

// FormFile is the uploaded file of field name (nil when none was sent).
func (x *Ctx) FormFile(name string) multipart.File {
	if x.R.MultipartForm == nil {
		return nil
	}
	f, _, err := x.R.FormFile(name)
	if err != nil {
		return nil
	}
	return f
}
