// Package layoutdoc keeps docs/layouts.md in sync with the layout
// constants of the packages it documents: Check, called from a package's
// own test, compares the page's rows for that package with the constants
// (unexported ones included); this package's test does the same for the
// exported constants of the packages that do not check themselves yet.
package layoutdoc
