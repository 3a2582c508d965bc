package ipc

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/mailbox"
)

// TestCreateExistingSaysItOnce: ErrExists matches fs.ErrExist too, and the
// message does not repeat the fs error's words.
func TestCreateExistingSaysItOnce(t *testing.T) {
	_, mf := mbNewForTest(t, mailbox.Config{})
	_, _, err := CreateMailbox(filepath.Dir(mf.File.Path()), "mbox", mailbox.Config{})
	require.ErrorIs(t, err, errExists)
	require.ErrorIs(t, err, fs.ErrExist)
	require.Equal(t, 1, strings.Count(err.Error(), "already exists"), err.Error())
	require.ErrorIs(t, errPermission, fs.ErrPermission)
	require.Equal(t, "ipc: permission denied", errPermission.Error())
}
