// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QCryptographicHash>

#ifdef MOETUNE_HAVE_LIBCRYPTO
#include <openssl/evp.h>
#endif

namespace moetune {

// SHA-256 through OpenSSL when available (about twice Qt 6.4's own implementation).
class Sha256 {
public:
#ifdef MOETUNE_HAVE_LIBCRYPTO
    Sha256()
        : m_ctx(EVP_MD_CTX_new()) {
        EVP_DigestInit_ex(m_ctx, EVP_sha256(), nullptr);
    }
    ~Sha256() {
        EVP_MD_CTX_free(m_ctx);
    }
    void add(const char *data, qint64 n) {
        EVP_DigestUpdate(m_ctx, data, size_t(n));
    }
    QByteArray hex() {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        EVP_DigestFinal_ex(m_ctx, md, &len);
        return QByteArray(reinterpret_cast<const char *>(md), int(len)).toHex();
    }
    Sha256(const Sha256 &) = delete;
    Sha256 &operator=(const Sha256 &) = delete;

private:
    EVP_MD_CTX *m_ctx;
#else
    void add(const char *data, qint64 n) {
        m_hash.addData(QByteArrayView(data, n));
    }
    QByteArray hex() {
        return m_hash.result().toHex();
    }

private:
    QCryptographicHash m_hash{QCryptographicHash::Sha256};
#endif
};

} // namespace moetune
