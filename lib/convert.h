/* Conversion between the classic files (/etc/passwd + /etc/shadow, or an
 * Openwall /etc/tcb tree) and the hardened tree.  pwconv and pwunconv are
 * thin mains over these. */
#ifndef HS_CONVERT_H
#define HS_CONVERT_H
/* Declared by the converters' owner. */
#endif
