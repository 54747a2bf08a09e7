package proxy

import (
	"fmt"
	"strings"

	"countwall/pgerror"
)

// countwall reads and writes UTF-8 only. A client encoding other than
// UTF8 is refused rather than accepted and ignored: a LATIN1 client's
// 'é' is one byte that would be read as something else, and its counts
// would silently answer another question. Drivers ask for UTF8 (pgjdbc,
// psycopg, pgx, node-postgres), so nothing a driver does by itself is
// refused; psql in a terminal asks for its locale's encoding, SQL_ASCII
// under the C locale, which passes bytes unconverted in PostgreSQL as
// well and is accepted at startup for that reason.

// postgresEncodings are PostgreSQL's encoding names (and aliases) in the
// form it compares them: lower case, letters and digits only.
var postgresEncodings = map[string]bool{
	"utf8": true, "unicode": true, "sqlascii": true, "big5": true, "eucjp": true, "euccn": true, "euckr": true,
	"euctw": true, "eucjis2004": true, "gb18030": true, "gbk": true, "johab": true, "koi8": true, "koi8r": true,
	"koi8u": true, "mskanji": true, "shiftjis": true, "shiftjis2004": true, "sjis": true, "tcvn": true,
	"tcvn5712": true, "uhc": true, "vscii": true, "win": true, "alt": true, "mule_internal": true, "muleinternal": true,
	"latin1": true, "latin2": true, "latin3": true, "latin4": true, "latin5": true, "latin6": true, "latin7": true,
	"latin8": true, "latin9": true, "latin10": true, "iso88591": true, "iso88592": true, "iso88593": true,
	"iso88594": true, "iso88595": true, "iso88596": true, "iso88597": true, "iso88598": true, "iso88599": true,
	"iso885910": true, "iso885913": true, "iso885914": true, "iso885915": true, "iso885916": true,
	"win866": true, "win874": true, "win1250": true, "win1251": true, "win1252": true, "win1253": true,
	"win1254": true, "win1255": true, "win1256": true, "win1257": true, "win1258": true, "windows866": true,
	"windows874": true, "windows1250": true, "windows1251": true, "windows1252": true, "windows1253": true,
	"windows1254": true, "windows1255": true, "windows1256": true, "windows1257": true, "windows1258": true,
}

// cleanEncodingName is PostgreSQL's clean_encoding_name: lower case,
// without the characters that are neither letters nor digits.
func cleanEncodingName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ClientEncoding checks a client_encoding asked for with SET (atStartup
// false) or in the startup packet, and returns the value the session
// reports: UTF8 for UTF8 and its aliases (utf-8, unicode, in any case),
// and at startup for SQL_ASCII too. Another encoding PostgreSQL knows is
// refused with 0A000, as PostgreSQL refuses a conversion it lacks; a name
// it does not know with 22023.
func ClientEncoding(value string, atStartup bool) (string, error) {
	name := cleanEncodingName(strings.Trim(strings.TrimSpace(value), `'"`))
	switch {
	case name == "utf8" || name == "unicode" || name == "default":
		return "UTF8", nil
	case name == "sqlascii" && atStartup:
		return "UTF8", nil
	case postgresEncodings[name]:
		return "", &pgerror.Error{Code: pgerror.FeatureNotSupported,
			Message: fmt.Sprintf("invalid value for parameter \"client_encoding\": %q: countwall converts no encoding; it reads and writes UTF8", value),
			Hint:    "Set client_encoding to UTF8 (psql: \\encoding UTF8, or PGCLIENTENCODING=UTF8 before connecting)."}
	}
	return "", &pgerror.Error{Code: pgerror.InvalidParameterValue,
		Message: fmt.Sprintf("invalid value for parameter \"client_encoding\": %q", value),
		Hint:    "countwall reads and writes UTF8: set client_encoding to UTF8."}
}
