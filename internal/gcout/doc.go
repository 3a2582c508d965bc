// Package gcout lets tests read what the Go compiler says about their own
// package: its assembly listing (-gcflags=-S) and its optimisation report
// (-gcflags=-m). duty's fast paths rest on properties of the generated code
// (a release store that is exactly a MOV, stores in a given order, a copy
// that is inlined); tests check them here rather than trusting them.
package gcout
