// Package forms holds the use cases of forms: create, read, list, update and delete.
package forms
