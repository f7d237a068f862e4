# dupdemo: the package envclean's tests build with pip (offline, no build isolation).
# Its extension links libdupcore.so, shipped in dupdemo/lib, through RUNPATH $ORIGIN/lib,
# as torch's extensions link libtorch*.so; the test compiles libdupcore.so first.
from setuptools import Extension, setup

setup(
    name="dupdemo",
    version="1.0",
    packages=["dupdemo"],
    package_data={"dupdemo": ["lib/libdupcore.so"]},
    ext_modules=[
        Extension(
            "dupdemo._C",
            ["dupdemo/_C.c"],
            library_dirs=["dupdemo/lib"],
            libraries=["dupcore"],
            extra_link_args=["-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib"],
        )
    ],
)
