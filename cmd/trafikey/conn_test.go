package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func TestACLUserFromEnvironment(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{Users: []string{"ops on >s3cret ~emq:{mail}:* +@all"}})
	c := valkeytest.Client(t, s)
	for _, name := range []string{"mail", "billing"} {
		_, err := trafikey.Open(t.Context(), c, name, nil)
		require.NoError(t, err)
	}
	vars := map[string]string{"TRAFIKEY_ADDR": s.Addr(), "TRAFIKEY_USER": "ops", "TRAFIKEY_PASSWORD": "s3cret"}
	out, errOut, code := runWith(t, envOf(vars), "", "stats", "mail", "--json")
	require.Equal(t, exitOK, code, errOut)
	require.EqualValues(t, 0, decode[map[string]any](t, out)["pending"])

	// The user may not read another queue's keys.
	_, errOut, code = runWith(t, envOf(vars), "", "stats", "billing")
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "NOPERM")

	// The demo on that server, as that user.
	out, errOut, code = runWith(t, envOf(vars), "", "demo", "--addr", s.Addr(), "--queue", "mail",
		"--jobs", "50", "--steady-jobs", "0", "--idle-probes", "0", "--progress=false")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "completed 50")

	// A flag wins over its variable.
	_, errOut, code = runWith(t, envOf(vars), "", "stats", "mail", "--password", "wrong")
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "WRONGPASS")
}

func TestAddrAndClusterExcludeEachOther(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	_, err := trafikey.Open(t.Context(), valkeytest.Client(t, s), "mail", nil)
	require.NoError(t, err)
	_, _, code := run(t, "queues", "--addr", s.Addr(), "--cluster", s.Addr())
	require.Equal(t, exitUsage, code)
	// --addr on the command line wins over TRAFIKEY_CLUSTER.
	env := envOf(map[string]string{"TRAFIKEY_CLUSTER": "127.0.0.1:1"})
	out, errOut, code := runWith(t, env, "", "queues", "--names", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "mail\n", out)
}

// writeCerts writes a CA and a certificate for 127.0.0.1 signed by it into
// dir, and returns the paths of the CA, the certificate and its key.
func writeCerts(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	write := func(name, kind string, der []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
		return p
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "trafikey test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	srvDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature,
	}, caCert, &srvKey.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	require.NoError(t, err)
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", srvDER), write("server.key", "EC PRIVATE KEY", keyDER)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestTLS(t *testing.T) {
	t.Parallel()
	ca, cert, key := writeCerts(t, t.TempDir())
	tlsPort := freePort(t)
	s := valkeytest.Start(t, valkeyserver.Options{Config: []string{
		"tls-port", strconv.Itoa(tlsPort), "tls-cert-file", cert, "tls-key-file", key,
		"tls-ca-cert-file", ca, "tls-auth-clients", "no",
	}})
	_, err := trafikey.Open(t.Context(), valkeytest.Client(t, s), "mail", nil)
	require.NoError(t, err)
	tlsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))

	out, errOut, code := run(t, "queues", "--names", "--addr", tlsAddr, "--tls-ca", ca)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "mail\n", out)

	out, errOut, code = runWith(t, envOf(map[string]string{"TRAFIKEY_TLS": "1", "TRAFIKEY_TLS_INSECURE": "true"}), "", "queues", "--names", "--addr", tlsAddr)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "mail\n", out)

	// Without the CA the server's certificate is not trusted.
	_, errOut, code = run(t, "queues", "--addr", tlsAddr, "--tls")
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "certificate")
}
