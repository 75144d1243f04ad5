/* Constants of the tanh and sigmoid forms (fastgelu/_gelu_sigmoid.pxi: the method), for every build: C macros,
   so that they fold into the vector code (a Cython module-level double is a global that stores through a
   double* may alias) */
#ifndef FG_XSIG_H
#define FG_XSIG_H

/* double-double constants (tools/fit_fp.py) */
#define FG_C2_HI 1.5957691216057308         /* 2*sqrt(2/pi) */
#define FG_C2_LO (-9.96930880911092e-17)
#define FG_A_HI 0.044715
#define FG_A_LO 2.1960211427085595e-18
#define FG_A3 0.134145                      /* 3*0.044715 = FG_A3 + FG_A3_LO */
#define FG_A3_LO 1.3526957332032908e-17
#define FG_K_HI 1.702
#define FG_K_LO 4.263256414560601e-17
#define FG_S 100.0                          /* float64 tail scaling exponent */
#define FG_INV_2S 7.888609052210118e-31     /* 2^-100 */

/* float32 forward: 2^-z with z = |w| log2(e) formed in double, the rest in float32 (tools/fit_fp.py style fit:
   2^f = 1 + f*Q(f) on |f| <= 1/2, relative error 2^-28.5 with these float coefficients) */
/* as float pairs hi + lo (2^-49 relative): 2*sqrt(2/pi)*log2(e), that times 0.044715, 1.702*log2(e) */
#define FG_K_TANH_HI 2.302208185195923f
#define FG_K_TANH_LO 1.2948402350332344e-08f
#define FG_KA_TANH_HI 0.10294324159622192f
#define FG_KA_TANH_LO (-2.016198541454628e-09f)
#define FG_K_SIG_HI 2.4554669857025146f
#define FG_K_SIG_LO (-2.6109498563187117e-08f)
#define FG_Z_MAX 180.0f                  /* 2^-z*2^64 stays a normal float; results there round to 0 */
#define FG_SHIFTER_F 12582912.0f         /* 1.5*2^23: adding it rounds a float to an integer */
#define FG_Q0 0.6931471824645996f
#define FG_Q1 0.24022650718688965f
#define FG_Q2 0.055504102259874344f
#define FG_Q3 0.00961803738027811f
#define FG_Q4 0.001333407824859023f
#define FG_Q5 0.0001546691928524524f
#define FG_Q6 1.516626070952043e-05f
#define FG_ONE_F 1.0f
#define FG_TWOM64_F 5.421010862427522e-20f

#endif
