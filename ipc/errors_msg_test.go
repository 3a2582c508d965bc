package ipc

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCreateExistingSaysItOnce: ErrExists matches fs.ErrExist too, and the
// message does not repeat the fs error's words.
func TestCreateExistingSaysItOnce(t *testing.T) {
	m := mbNewForTest(t, MailboxConfig{})
	_, err := CreateMailbox(filepath.Dir(m.Path()), "mbox", MailboxConfig{})
	require.ErrorIs(t, err, ErrExists)
	require.ErrorIs(t, err, fs.ErrExist)
	require.Equal(t, 1, strings.Count(err.Error(), "already exists"), err.Error())
	require.ErrorIs(t, ErrPermission, fs.ErrPermission)
	require.Equal(t, "ipc: permission denied", ErrPermission.Error())
}
