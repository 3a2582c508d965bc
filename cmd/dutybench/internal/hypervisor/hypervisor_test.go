package hypervisor

import "testing"

func TestVendorNamesSomething(t *testing.T) {
	v := Vendor(false)
	if v == "" {
		t.Fatal("empty vendor")
	}
	t.Log(v)
}
