package dash

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Auth is the dashboard's login: a bearer token, a user and password
// (HTTP basic authentication), or both (either is then accepted). The
// zero Auth lets every request in.
//
// The token is sent as "Authorization: Bearer <token>" (Prometheus,
// scripts), or once as ?token=<token> on any page: the dashboard then sets
// it as a cookie (HttpOnly, SameSite=Strict) and sends the browser to the
// same address without it, so that the pages' own requests carry it. A
// user and password are asked for by the browser itself.
type Auth struct {
	Token    string
	User     string
	Password string
}

// Enabled reports whether a login is asked for.
func (a Auth) Enabled() bool { return a.Token != "" || a.User != "" }

// minTokenLen is the shortest token accepted: a guessable token is no
// login.
const minTokenLen = 16

func (a Auth) check() error {
	if a.Token != "" && len(a.Token) < minTokenLen {
		return errors.New("dashboard token: at least 16 characters")
	}
	if (a.User == "") != (a.Password == "") {
		return errors.New("dashboard basic authentication: both a user and a password")
	}
	if strings.Contains(a.User, ":") {
		return errors.New("dashboard basic authentication: the user cannot hold ':'")
	}
	return nil
}

// tokenCookie holds the token in the browser.
const tokenCookie = "trafikey_dash_token"

// same compares a secret given with the one expected in constant time:
// both are hashed first, so neither their bytes nor their lengths show in
// the time taken.
func same(given, want string) bool {
	g, w := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// allowed reports whether r carries the login.
func (a Auth) allowed(r *http.Request) bool {
	ok := false
	if a.Token != "" {
		if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			ok = same(strings.TrimSpace(h[7:]), a.Token) || ok
		}
		if c, err := r.Cookie(tokenCookie); err == nil {
			ok = same(c.Value, a.Token) || ok
		}
	}
	if a.User != "" {
		if u, p, has := r.BasicAuth(); has {
			// Both compared whatever the first's answer.
			userOK, passOK := same(u, a.User), same(p, a.Password)
			ok = (userOK && passOK) || ok
		}
	}
	return ok
}

// wrap asks next's every request for the login, when there is one.
func (a Auth) wrap(next http.Handler) http.Handler {
	if !a.Enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.Token != "" && r.Method == http.MethodGet && r.URL.Query().Has("token") {
			a.login(w, r)
			return
		}
		if a.allowed(r) {
			next.ServeHTTP(w, r)
			return
		}
		if a.User != "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="trafikey dash", charset="UTF-8"`)
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer realm="trafikey dash"`)
		}
		msg := "this dashboard asks for a login"
		if a.Token != "" {
			msg += ": open it once at /?token=<the token>, or send Authorization: Bearer <the token>"
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			writeJSON(w, http.StatusUnauthorized, apiError{Error: msg, Code: "unauthorized"})
			return
		}
		http.Error(w, msg, http.StatusUnauthorized)
	})
}

// login sets the token of ?token= as the cookie when it is the right one,
// and sends the browser to the address without it.
func (a Auth) login(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !same(q.Get("token"), a.Token) {
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: tokenCookie, Value: a.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	q.Del("token")
	to := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
}

// Exposed reports whether addr, a listener's address, is reached from
// beyond this machine: any address but a loopback one (the unspecified
// address, 0.0.0.0 or ::, is every interface).
func Exposed(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return !ok || !tcp.IP.IsLoopback()
}
